"""Tests of the Kubernetes API server stand-in itself."""
