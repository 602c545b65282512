// Placeholder until the CipherCLI target lands.
