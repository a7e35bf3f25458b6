"""Measurement: timing, statistics, NVML telemetry, environment fingerprint."""
