//! Unit tests of the checkpoint module's pure parts: the index, its deltas and the codec.
