"""Hypothesis profiles of the fuzz suite: `ci` (the default, a bounded run well under a minute, the same
cases every time) and `long` (bench/bench_fuzz.py: many cases, fresh ones each run)."""

from hypothesis import HealthCheck, settings

SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", deadline=None, derandomize=True, database=None, suppress_health_check=SLOW_OK)
settings.register_profile("long", deadline=None, database=None, suppress_health_check=SLOW_OK)
settings.load_profile("ci")
