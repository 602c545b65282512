// Placeholder until the CipherKeystore target lands.
