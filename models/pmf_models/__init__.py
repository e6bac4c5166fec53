"""Training, quantization and the plaintext-model format for private mail functions."""
