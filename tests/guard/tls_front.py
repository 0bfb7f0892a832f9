"""HTTPS in front of ``kite-skills sandbox --http``, for the guard's TLS from the built file:
Zerodha's hosted server (https://mcp.kite.trade/mcp) cannot be reached from the test machines.
A certificate authority made here signs a certificate for 127.0.0.1; the front ends TLS with
it and passes each request on to the sandbox, its ``Host`` named as the sandbox's own (the
sandbox answers only requests for its own address)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(the authority's certificate, the server's certificate, its key), as PEM files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    signs_certificates = x509.KeyUsage(
        digital_signature=False,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kite-skills test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(signs_certificates, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "server.pem", folder / "server-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


async def _pass_on(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, to_port: int
) -> None:
    """One connection: each request's head (its Host rewritten) and body to the sandbox, and
    everything the sandbox sends back."""
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", to_port)

    async def back() -> None:
        while data := await up_reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    answers = asyncio.create_task(back())
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head[:-4].split(b"\r\n")
            length = 0
            for n, line in enumerate(lines):
                name = line.split(b":", 1)[0].strip().lower()
                if name == b"host":
                    lines[n] = b"Host: 127.0.0.1:%d" % to_port
                elif name == b"content-length":
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            up_writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
            await up_writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
        pass  # the client went away, or refused the certificate
    finally:
        up_writer.close()
        answers.cancel()


@contextlib.contextmanager
def tls_front(to_port: int, folder: Path) -> Iterator[tuple[int, Path]]:
    """Serve HTTPS on 127.0.0.1 in front of 127.0.0.1:``to_port``: yields (its port, the
    authority's certificate, for SSL_CERT_FILE)."""
    ca, cert, key = _certificates(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda loop, context: None)  # a refused handshake is expected
    started = threading.Event()
    where: dict[str, int] = {}

    async def serve() -> asyncio.Server:
        server = await asyncio.start_server(
            lambda r, w: _pass_on(r, w, to_port), "127.0.0.1", 0, ssl=context
        )
        where["port"] = server.sockets[0].getsockname()[1]
        return server

    def run() -> None:
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(serve())
        started.set()
        loop.run_forever()
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30), "the TLS front did not start"
    try:
        yield where["port"], ca
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
