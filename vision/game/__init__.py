"""The game floor: readers of the game built on the recognized tiles (the table's sets and
lines, a rack, a turn, the live tracker). It may import `vision.recognition`, never the
other way round."""
