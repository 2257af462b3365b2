"""The ``base.py`` ir_measures' tests import (``from .base import BaseMeasureTest``), which its 0.4.3 sdist
does not ship: written here from what the tests use, ``assertMetrics(a, b, places=4, not_equal=False)``,
two lists of ``Metric`` records compared as sorted lists, field by field, values to ``places`` decimals
(or asserted unequal). Put beside the tests as ``base.py`` by tests/test_ir_measures_suite.py."""

import unittest


class BaseMeasureTest(unittest.TestCase):
    def assertMetrics(self, a, b, places=4, not_equal=False):
        a, b = sorted(a), sorted(b)
        self.assertEqual(len(a), len(b))
        for mine, theirs in zip(a, b, strict=True):
            self.assertEqual(mine.query_id, theirs.query_id)
            self.assertEqual(mine.measure, theirs.measure)
            if not_equal:
                self.assertNotAlmostEqual(mine.value, theirs.value)
            else:
                self.assertAlmostEqual(mine.value, theirs.value, places=places)
