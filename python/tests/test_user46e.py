"""A first deployment of ccs serve, over TLS: each test failed at c3574ff
for the reason in its docstring."""

import shutil
import subprocess

import numpy as np
import pytest

import ccs


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    """ccs.serve over TLS with a self-signed certificate (openssl), a body
    limit of 1 MiB, and the certificate trusted through SSL_CERT_FILE (the
    only way docs/python.md leaves: ccs.Client takes no CA file)."""
    assert shutil.which("openssl"), "openssl: ./scripts/setup test installs it"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    splits = ccs.simulate(seed=1, k=20, per_class=300)
    s = ccs.calibrate("ball", splits["cal"], reference=100, ood_cal=splits["val"])
    srv = ccs.serve({"ball": s}, addr="127.0.0.1:0", tls_cert=str(cert), tls_key=str(key), max_body=1 << 20)
    yield srv
    srv.close()


def test_user46e_client_tls_body_over_limit_says_so(tls_server):
    """docs/python.md: a body over the service's limit cut while it is sent
    raises ConnectionError. Over plain HTTP the message says the body was
    most likely over the limit and to send fewer points; over HTTPS the cut
    is an ssl.SSLEOFError, which the client does not recognise, and it says
    "no answer … is the service running?" of a running service. (Client.ood
    sends all points in one request — Client.score splits them.)"""
    assert tls_server.url.startswith("https://")
    c = ccs.Client(tls_server.url)
    assert c.ready()
    pts = np.zeros((100_000, 3), np.float32)  # 1.2 MB: over the 1 MiB limit
    with pytest.raises((ConnectionError, ccs.ServiceError)) as e:  # the 413 read whole, or the body cut while sent
        c.ood("ball", pts)
    if isinstance(e.value, ccs.ServiceError):
        assert e.value.status == 413, e.value
    else:
        msg = str(e.value)
        assert "body limit" in msg and "is the service running" not in msg, msg
