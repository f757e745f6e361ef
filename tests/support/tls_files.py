"""Files the learner's security reads, made for a test: a token file, a self-signed
certificate."""

import datetime
import ipaddress
import subprocess
from pathlib import Path

TOKEN = "s3cret-token-for-tests-0123456789"


def self_signed(tmp_path: Path, ips: tuple[str, ...] = ()) -> tuple[str, str]:
    """A throwaway self-signed certificate for 127.0.0.1, localhost and ``ips`` (other
    addresses actors dial, e.g. a node's cluster address): (cert, key) paths."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    ips = tuple(dict.fromkeys(("127.0.0.1", *ips)))
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost," + ",".join(f"IP:{ip}" for ip in ips),
                        "-keyout", str(key), "-out", str(cert)], check=True,
                       capture_output=True)
        return str(cert), str(key)
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(private.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost")]
            + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256()))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return str(cert), str(key)


def token_file(tmp_path: Path, token: str = TOKEN, name: str = "token") -> str:
    path = tmp_path / name
    path.write_text(token + "\n")
    path.chmod(0o600)
    return str(path)
