"""What producers and workers share: configuration, the wire codec, prompts, key names, errors."""
