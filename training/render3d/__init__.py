"""Photos of tile stands with depth: a 3D painter with per-pixel visibility (see docs/renders.md)."""
