"""The tile classifier: crops, network, training, export and evaluation."""
