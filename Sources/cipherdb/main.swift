print("cipherdb: not built yet")
