"""Measuring tools: ``voice bench e2e | matrix | prefill | speculative | contention``."""
