package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 named cn and
// its key; it returns their paths.
func selfSigned(t *testing.T, dir, cn string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, cn+".pem"), filepath.Join(dir, cn+".key")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certPath, keyPath
}

// ccs runs a command, discarding its output.
func ccs(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(&out, io.Discard, args)
	return out.String(), err
}

// calibratedBall simulates a small data set in dir and calibrates the ℓ2
// ball on it; it returns the set file.
func calibratedBall(t *testing.T, dir string) string {
	t.Helper()
	if _, err := ccs("simulate", "-out", dir, "-per-class", "60", "-k", "3", "-seed", "4"); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if _, err := ccs("calibrate", "-geometry", "ball", "-cal", filepath.Join(dir, "cal.npz"), "-out", set); err != nil {
		t.Fatal(err)
	}
	return set
}

// TestServeRefusesOpenAddress: listening beyond loopback without tokens is
// a usage error that says why, unless -insecure; -tls-cert alone is too.
func TestServeRefusesOpenAddress(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		_, err := ccs("serve", "-set", "a=x.json", "-addr", addr)
		if !isUsage(err) || !strings.Contains(err.Error(), "-auth-tokens") || !strings.Contains(err.Error(), "-insecure") {
			t.Errorf("-addr %s: %v, want a usage error naming -auth-tokens and -insecure", addr, err)
		}
	}
	// -insecure passes the check (and fails later, on the missing set).
	if _, err := ccs("serve", "-set", "a=missing.json", "-addr", "0.0.0.0:0", "-insecure"); err == nil || isUsage(err) {
		t.Errorf("-insecure: %v, want the set file's error", err)
	}
	if _, err := ccs("serve", "-set", "a=x.json", "-tls-cert", "c.pem"); !isUsage(err) {
		t.Errorf("-tls-cert without -tls-key: %v", err)
	}
	if _, err := ccs("serve", "-set", "a=x.json", "-metrics", "public"); !isUsage(err) {
		t.Errorf("-metrics public: %v", err)
	}
	// An address no listener could take is a usage error.
	for addr, want := range map[string]string{"127.0.0.1:99999": "port 99999: want a number from 0 to 65535", "127.0.0.1": "missing port in address: want HOST:PORT", "localhost:80x": "port 80x"} {
		if _, err := ccs("serve", "-set", "a=x.json", "-addr", addr); !isUsage(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("-addr %s: %v, want a usage error saying %q", addr, err, want)
		}
	}
	// A tokens file that cannot serve is refused before the port is bound
	// and the loading probes answer healthy: nothing said of loading.
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# none yet\n"), 0o600)
	for file, want := range map[string]string{
		filepath.Join(dir, "nope.txt"): "-auth-tokens: open " + filepath.Join(dir, "nope.txt"),
		empty:                          "-auth-tokens: tokens file " + empty + ": no tokens",
		dir:                            "-auth-tokens: tokens file " + dir + " is a directory",
	} {
		var stderr bytes.Buffer
		err := run(io.Discard, &stderr, []string{"serve", "-set", "a=x.json", "-addr", "127.0.0.1:0", "-auth-tokens", file})
		if err == nil || isUsage(err) || !strings.HasPrefix(err.Error(), want) || strings.Contains(stderr.String(), "loading") {
			t.Errorf("-auth-tokens %s: %v (stderr %q), want %q before loading", file, err, stderr.String(), want)
		}
	}
	// A name that resolves to loopback passes.
	if _, err := ccs("serve", "-set", "a=missing.json", "-addr", "localhost:0"); err == nil || isUsage(err) {
		t.Errorf("localhost: %v, want the set file's error", err)
	}
}

// TestServeTLSAuth serves HTTPS with a certificate made here and tokens:
// the client that trusts the certificate and holds a token is answered,
// one without a token gets 401, a plain-HTTP client is refused, TLS 1.1 is
// refused; ccs loadtest with -token-file and -ca-cert drives it without an
// error; SIGHUP loads a new certificate for new connections; the tokens
// never reach the log.
func TestServeTLSAuth(t *testing.T) {
	dir := t.TempDir()
	var sink bytes.Buffer
	set := calibratedBall(t, dir)
	cert, key := selfSigned(t, dir, "first")
	const token = "test-token-0123456789abcdef"
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("ci:"+token+":admin\n"), 0o600)
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)

	srv := startServe(t, "serve", "-set", "ball="+set, "-addr", "127.0.0.1:0",
		"-auth-tokens", tokens, "-tls-cert", cert, "-tls-key", key)
	base := srv.base
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("serving %s, want https", base)
	}
	client := func(certPath string, maxVersion uint16) *http.Client {
		pemData, _ := os.ReadFile(certPath)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pemData)
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: maxVersion}}}
	}
	get := func(c *http.Client, tok string) (int, error) {
		req, _ := http.NewRequest("GET", base+"/v1/sets", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	first := client(cert, 0)
	if code, err := get(first, token); code != 200 {
		t.Fatalf("with the token: %d %v", code, err)
	}
	if code, err := get(first, ""); code != 401 {
		t.Errorf("without a token: %d %v", code, err)
	}
	if resp, err := http.Get(strings.Replace(base, "https", "http", 1) + "/healthz"); err == nil {
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP: %d, want 400", resp.StatusCode)
		}
		resp.Body.Close()
	}
	old := client(cert, tls.VersionTLS11)
	old.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS10
	if _, err := get(old, token); err == nil || !strings.Contains(err.Error(), "remote error: tls: protocol version not supported") {
		t.Errorf("TLS 1.1: %v, want the server's protocol version alert", err)
	}
	var out bytes.Buffer
	ball, err := conformal.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	zeros, _ := json.Marshal(make([]float32, ball.Geometry.Dim()))
	anchor := fmt.Sprintf(`{"anchor": %s, "points": [%s, %s]}`, zeros, zeros, zeros)
	if err := run(&out, &sink, []string{"loadtest", "-url", base + "/v1/sets/ball/score", "-data", anchor,
		"-requests", "40", "-concurrency", "2", "-json", "-token-file", tokenFile, "-ca-cert", cert}); err != nil {
		t.Fatal(err)
	}
	var lr struct{ Requests, Errors int }
	if json.Unmarshal(out.Bytes(), &lr); lr.Requests != 40 || lr.Errors != 0 {
		t.Errorf("loadtest over TLS with a token: %s", out.String())
	}
	// A new certificate on SIGHUP: new connections get it.
	cert2, key2 := selfSigned(t, dir, "second")
	os.Rename(cert2, cert)
	os.Rename(key2, key)
	srv.hup <- os.Interrupt
	waitFor(t, srv.stderr, "generation 2")
	if code, err := get(client(cert, 0), token); code != 200 {
		t.Errorf("the new certificate after SIGHUP: %d %v", code, err)
	}
	first.CloseIdleConnections()
	if _, err := get(first, token); err == nil {
		t.Error("a client trusting only the old certificate still connects")
	}
	srv.stop(t)
	if strings.Contains(srv.stderr.String(), token) {
		t.Errorf("the log shows the token:\n%s", srv.stderr.String())
	}
}

// TestLoadtestAllRefused: a load test whose every request is refused (a
// wrong token: 401) fails, with the server's words, rather than printing
// the refusals' latencies as a result.
func TestLoadtestAllRefused(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error": {"code": "unauthorized", "message": "no valid token"}}`)
	}))
	defer ts.Close()
	var out, errb bytes.Buffer
	err := run(&out, &errb, []string{"loadtest", "-url", ts.URL + "/v1/sets/a/score", "-data", "{}", "-requests", "5"})
	want := `loadtest: every one of the 5 answered requests was refused: status 401: {"error": {"code": "unauthorized", "message": "no valid token"}}`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
