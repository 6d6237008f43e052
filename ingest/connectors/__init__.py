"""Source connectors: one package per database family, common code in `base`."""
