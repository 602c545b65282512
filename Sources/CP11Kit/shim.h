// The PKCS#11 header of p11-kit (Debian's libp11-kit-dev), found through pkg-config.
#include <p11-kit/pkcs11.h>
