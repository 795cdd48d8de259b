"""`rummikub serve`: the certificate, the QR code, clear one-line refusals."""

from __future__ import annotations

import hashlib
import io
import socket

from app.cli import build_parser, main
from app.cli.serve import ensure_certificate, print_qr, run_serve


def test_serve_is_a_subcommand_with_its_options():
    args = build_parser().parse_args(["serve", "--host", "127.0.0.1", "--port", "8123",
                                      "--https", "--db", "x.sqlite3"])
    assert args.func is run_serve
    assert (args.host, args.port, args.https, str(args.db)) == ("127.0.0.1", 8123, True,
                                                                "x.sqlite3")


def test_the_certificate_is_made_once_and_its_fingerprint_is_the_sha256_of_it(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    cert, key, fingerprint = ensure_certificate(tmp_path / "tls", ["192.0.2.7"])
    again = ensure_certificate(tmp_path / "tls", ["192.0.2.99"])
    assert again == (cert, key, fingerprint)  # reused, so a phone that trusted it still does
    loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    digest = hashlib.sha256(loaded.public_bytes(Encoding.DER)).hexdigest().upper()
    assert fingerprint.replace(":", "") == digest
    names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "192.0.2.7" in [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]
    assert key.stat().st_mode & 0o077 == 0  # the private key is readable by its owner only


def test_the_join_link_is_printed_as_a_qr_code():
    out = io.StringIO()
    print_qr("http://192.0.2.7:8000/?t=abc", out)
    lines = out.getvalue().splitlines()
    assert len(lines) > 10 and all(len(line) == len(lines[0]) for line in lines)


def test_a_busy_port_is_one_clear_line_and_exit_status_2(tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status = main(["serve", "--host", "127.0.0.1", "--port", str(port), "--data",
                       str(tmp_path), "--no-qr"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"127.0.0.1:{port}" in err


def test_a_missing_calibration_profile_is_one_clear_line(tmp_path, capsys):
    status = main(["serve", "--port", "8124", "--data", str(tmp_path), "--profile",
                   str(tmp_path / "none.json")])
    err = capsys.readouterr().err
    assert status == 2 and "--profile" in err and len(err.strip().splitlines()) == 1
