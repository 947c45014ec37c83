"""The bench's harness: what every scenario shares (see docs/benchmarks.md)."""
