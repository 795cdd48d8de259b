"""The tile detector: a small CenterNet-style net predicting oriented tile rectangles."""
