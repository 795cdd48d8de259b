"""`rummikub serve`: the game server for phones at the table (FastAPI on uvicorn).

It prints the address a phone opens, with the table token, as a URL and a QR code. Plain
HTTP offers photo mode; phone browsers open the live camera only on a secure origin, so
`--https` makes (once) a self-signed certificate in the data folder and prints its
SHA-256 fingerprint, which a player can compare with what the phone shows.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from app.cli.common import add_models_option

    parser = subparsers.add_parser(
        "serve",
        help="run the game server that the phones at the table open",
        description="Start the game server: games, turns judged from photos or the live "
        "camera, the turn timer, the score sheet. Prints the address (with the table "
        "token) as a URL and a QR code. The API is described at /docs.",
    )
    parser.add_argument("--host", default="0.0.0.0",
                        help="address to listen on (default 0.0.0.0: the whole LAN; "
                        "127.0.0.1: this computer only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--data", type=Path, default=Path("data"), metavar="DIR",
                        help="data folder: database, certificate (default ./data)")
    parser.add_argument("--db", default=None, metavar="PATH|URL",
                        help="SQLite database file (default DIR/rummikub.sqlite3), or a "
                        "PostgreSQL database: postgresql+psycopg://user@host/dbname")
    parser.add_argument("--https", action="store_true",
                        help="serve HTTPS with a self-signed certificate (made once in "
                        "DIR/tls/), so phones may open the live camera")
    add_models_option(parser)
    parser.add_argument("--profile", metavar="FILE", type=Path, default=None,
                        help="calibration profile of this table's tiles "
                        "(`rummikub calibrate`)")
    parser.add_argument("--frame-workers", type=int, default=1, metavar="N",
                        help="threads reading camera frames, shared by all tables (default 1: "
                        "each read already uses two cores)")
    parser.add_argument("--decode-memory", type=int, default=None, metavar="MB",
                        help="memory for decoded photos and frames, all at once (default "
                        "768 MB: two of the largest photos; more wait their turn)")
    parser.add_argument("--no-qr", action="store_true", help="print the URL without a QR code")
    parser.set_defaults(func=run_serve)


def _error(message: str):
    from app.cli import CommandError

    return CommandError(message)


def lan_address() -> str:
    """This computer's address on the LAN (the one a route to the outside would use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            # No packet is sent: connecting a UDP socket only picks the outgoing interface.
            probe.connect(("10.254.254.254", 1))
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def ensure_certificate(folder: Path, hosts: list[str]) -> tuple[Path, Path, str]:
    """(certificate, key, SHA-256 fingerprint): made once, then reused, so a phone that
    accepted it once keeps accepting it."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    if not (cert_path.is_file() and key_path.is_file()):
        folder.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        names = []
        for host in dict.fromkeys(["localhost", "127.0.0.1", *hosts]):
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Rummikub referee")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=3650))
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .sign(key, hashes.SHA256()))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key_path.chmod(0o600)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    digest = cert.fingerprint(hashes.SHA256()).hex().upper()
    fingerprint = ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))
    return cert_path, key_path, fingerprint


def print_qr(text: str, out=sys.stdout) -> None:
    import qrcode

    qr = qrcode.QRCode(border=1)
    qr.add_data(text)
    qr.make(fit=True)
    qr.print_ascii(out=out, invert=True)


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as error:
            raise _error(f"cannot listen on {host}:{port}: {error.strerror or error} "
                         f"(another server there? try --port)") from None


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.server import ServerSettings, create_app
    from app.server.storage import DatabaseRefused, Storage
    from vision.recognition.pipeline import ModelsMissing

    if not 0 < args.port < 65536:
        raise _error(f"--port {args.port}: a port number 1-65535")
    if not 1 <= args.frame_workers <= 64:
        raise _error(f"--frame-workers {args.frame_workers}: 1 to 64 threads")
    if args.decode_memory is not None and not 64 <= args.decode_memory <= 1_000_000:
        raise _error(f"--decode-memory {args.decode_memory}: 64 MB or more")
    settings = ServerSettings(data_dir=args.data, db_path=args.db, models_dir=args.models,
                              profile=args.profile, frame_workers=args.frame_workers)
    # The database first: a bad one is refused in a line before the models take seconds.
    try:
        storage = Storage(settings.database)
        token, label = storage.table_token(), storage.target.label
        storage.close()
    except DatabaseRefused as error:
        raise _error(str(error)) from None
    except Exception as error:  # a full disk, a database server gone mid-way
        from app.server.dbopen import target

        where = target(settings.database).label  # a URL's password is not printed
        raise _error(f"cannot open the database {where}: {error}") from None
    if args.decode_memory is not None:
        settings.decode_memory = args.decode_memory * 2**20
    try:
        settings.reader = _load(settings)
    except ModelsMissing as error:
        raise _error(str(error)) from None
    _check_port(args.host, args.port)

    local_only = args.host in ("127.0.0.1", "localhost", "::1")
    address = "127.0.0.1" if local_only else (lan_address() if args.host in ("0.0.0.0", "::")
                                              else args.host)
    ssl = {}
    scheme = "http"
    if args.https:
        cert, key, fingerprint = ensure_certificate(Path(args.data) / "tls", [address])
        ssl = {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
        scheme = "https"
    url = f"{scheme}://{address}:{args.port}/?t={token}"
    print(f"Rummikub referee server, database {label}")
    print(f"Open on a phone at the table (keep this link private: it lets anyone create "
          f"games):\n  {url}")
    if not args.no_qr:
        print_qr(url)
    if args.https:
        print(f"Self-signed certificate {ssl['ssl_certfile']}\n  SHA-256 fingerprint "
              f"{fingerprint}\n  The phone warns once; check the fingerprint, then accept.")
    else:
        print("Plain HTTP: phones can send photos; for the live camera start with --https.")
    print(f"API documentation: {scheme}://{address}:{args.port}/docs")
    sys.stdout.flush()
    app = create_app(settings)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                ws_max_size=settings.upload_limit, **ssl)
    return 0


def _load(settings):
    from app.server.main import load_reader

    try:
        return load_reader(settings)
    except ValueError as error:  # a calibration ProfileError
        raise _error(f"--profile: {error}") from None
