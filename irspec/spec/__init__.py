"""The metric-spec language and the metrics' names: text to syntax tree (``syntax``, its grammar in
``grammar/metric.lark``), what a plugin declares (``definitions``), the name table that binds a tree to
a definition (``registry``), the pluggy hooks (``hooks``) and the plugin manager (``plugins``).

Nothing here reads files of data or imports numpy: parsing a spec stays cheap (``irspec.parse``).
"""
