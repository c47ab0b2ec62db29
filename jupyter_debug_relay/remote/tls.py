"""TLS for a relay served beyond loopback: which hosts are loopback, a self-signed certificate, its SHA-256
fingerprint, and a client context that accepts the one certificate with that fingerprint, checked in the
handshake."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import re
import ssl

from ..errors import RelayError

_HEX = re.compile(r"[0-9a-f]{64}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost): what needs no TLS."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def normalize(fingerprint: str) -> str:
    """``AB:CD:…``, ``sha256:abcd…`` or plain hex, as 64 lowercase hex digits; ``invalid_request`` otherwise."""
    text = fingerprint.strip().lower()
    text = text.removeprefix("sha256:").removeprefix("sha256 ").replace(":", "").replace(" ", "")
    if not _HEX.fullmatch(text):
        raise RelayError("invalid_request", f"{fingerprint!r} is not a SHA-256 fingerprint.",
                         "Give the 64 hex digits the remote printed at start (colons allowed).",
                         {"field": "fingerprint"})
    return text


def shown(fingerprint: str) -> str:
    """A fingerprint as people read it: ``AB:CD:…``."""
    return ":".join(fingerprint[i:i + 2] for i in range(0, len(fingerprint), 2)).upper()


def fingerprint_of(der: bytes) -> str:
    """The SHA-256 fingerprint of a certificate in DER form, as 64 hex digits."""
    return hashlib.sha256(der).hexdigest()


def file_fingerprint(cert_file: str) -> str:
    """The SHA-256 fingerprint of the first certificate of a PEM file."""
    with open(cert_file) as f:
        return fingerprint_of(ssl.PEM_cert_to_DER_cert(f.read()))


def self_signed(host: str, folder: str) -> tuple[str, str, str]:
    """A certificate for ``host`` made now, valid a year, in ``folder``: cert file, key file (0600), fingerprint."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jupyter-debug-relay")])
    try:
        alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        alt = x509.DNSName(host)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .sign(key, hashes.SHA256()))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    cert_file, key_file = os.path.join(folder, "relay-cert.pem"), os.path.join(folder, "relay-key.pem")
    with open(cert_file, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_file, key_file, cert.fingerprint(hashes.SHA256()).hex()


class _Pinned(ssl.SSLObject):
    """A TLS connection that fails its handshake unless the peer's certificate has the pinned fingerprint."""

    def do_handshake(self) -> None:
        super().do_handshake()
        expected = getattr(self.context, "pinned", None)
        got = fingerprint_of(self.getpeercert(binary_form=True) or b"")
        if expected is not None and got != expected:
            raise ssl.SSLCertVerificationError(f"certificate fingerprint {shown(got)} is not the pinned one")


def client_context(fingerprint: str | None, cafile: str | None = None) -> ssl.SSLContext:
    """A client context: the pinned ``fingerprint`` alone when given (no CA, no hostname), else the CAs'."""
    if fingerprint is None:
        return ssl.create_default_context(cafile=cafile)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the fingerprint, checked in the handshake, is the whole trust
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.sslobject_class = _Pinned
    context.pinned = normalize(fingerprint)  # type: ignore[attr-defined]
    return context
