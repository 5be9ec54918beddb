//! Headless `-p` mode: submit one prompt, print the answer as text, json or stream-json.
