"""Statistics on plain arrays: significance tests, resampling, power design, agreement. Knows no Result."""
