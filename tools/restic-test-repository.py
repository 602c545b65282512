# Re-wraps a restic repository's master key under cheap scrypt parameters (N=1024, r=8, p=1), for the
# test fixture Tests/Fixtures/restic-repository: restic calibrates its KDF to take half a second on
# every run, which made each test spend most of its time in scrypt. Made with:
#   restic -r DIR init --password-file /dev/fd/3 3<<<"cipherdb-fixture-7f3a9c"
#   python3 tools/restic-test-repository.py DIR "cipherdb-fixture-7f3a9c"   (needs python3-cryptography)
# then DIR/config and DIR/keys/ copied. Never use such a key for real data.
import base64, hashlib, json, os, sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.poly1305 import Poly1305
repo, password = sys.argv[1], sys.argv[2].encode()
MASK = bytes([0xff,0xff,0xff,0x0f,0xfc,0xff,0xff,0x0f,0xfc,0xff,0xff,0x0f,0xfc,0xff,0xff,0x0f])
def keys(salt, n, r, p):
    d = hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=2**31-1, dklen=64)
    return d[:32], d[32:48], bytes(a & b for a, b in zip(d[48:64], MASK))
def mac(k, rk, nonce, msg):
    enc = Cipher(algorithms.AES(k), modes.ECB()).encryptor()
    s = enc.update(nonce) + enc.finalize()
    return Poly1305.generate_tag(rk + s, msg)
def ctr(key, nonce, data):
    c = Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor()
    return c.update(data) + c.finalize()
kdir = os.path.join(repo, "keys")
name = os.listdir(kdir)[0]
kf = json.load(open(os.path.join(kdir, name)))
salt = base64.b64decode(kf["salt"])
ek, mk, mr = keys(salt, kf["N"], kf["r"], kf["p"])
data = base64.b64decode(kf["data"])
nonce, ct, tag = data[:16], data[16:-16], data[-16:]
assert mac(mk, mr, nonce, ct) == tag, "MAC mismatch"
master = ctr(ek, nonce, ct)
json.loads(master)
n, r, p = 1024, 8, 1
salt2 = os.urandom(64)
ek, mk, mr = keys(salt2, n, r, p)
nonce = os.urandom(16)
ct = ctr(ek, nonce, master)
kf.update({"N": n, "r": r, "p": p, "salt": base64.b64encode(salt2).decode(), "username": "cipherdb-tests", "hostname": "cipherdb-tests",
           "data": base64.b64encode(nonce + ct + mac(mk, mr, nonce, ct)).decode()})
body = json.dumps(kf).encode()
os.remove(os.path.join(kdir, name))
open(os.path.join(kdir, hashlib.sha256(body).hexdigest()), "wb").write(body)
