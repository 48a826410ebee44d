package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files Certs made.
type Files struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string // for 127.0.0.1
	ClientCert, ClientKey string // CommonName client
}

// Certs writes a CA and, signed by it, a server certificate for 127.0.0.1
// and a client certificate for client, valid for an hour, in dir.
func Certs(t testing.TB, dir, client string) Files {
	t.Helper()
	caCert, caKey := issue(t, nil, nil, "edgebench test CA", true)
	f := Files{CA: filepath.Join(dir, "ca.pem")}
	writePEM(t, f.CA, "CERTIFICATE", caCert.Raw)
	f.ServerCert, f.ServerKey = writePair(t, dir, "server", caCert, caKey, "127.0.0.1")
	f.ClientCert, f.ClientKey = writePair(t, dir, "client", caCert, caKey, client)
	return f
}

// WebCerts are the PEM files WebCertificates made: a CA and the server
// certificates it signed that the tests of an HTTPS client need.
type WebCerts struct {
	CA        string // the CA certificate
	Cert, Key string // for localhost and 127.0.0.1, valid for an hour
	// Expired is for localhost and 127.0.0.1, expired an hour ago.
	Expired, ExpiredKey string
	// WrongHost is valid for an hour, for wrong.example only.
	WrongHost, WrongHostKey string
}

// WebCertificates writes a CA and, signed by it, the server certificates
// of WebCerts (ECDSA P-256 keys) in dir.
func WebCertificates(t testing.TB, dir string) WebCerts {
	t.Helper()
	caCert, caKey := issue(t, nil, nil, "edgebench test CA", true)
	c := WebCerts{CA: filepath.Join(dir, "ca.pem")}
	writePEM(t, c.CA, "CERTIFICATE", caCert.Raw)
	now := time.Now()
	c.Cert, c.Key = writeLeaf(t, dir, "server", caCert, caKey, []string{"localhost", "127.0.0.1"}, now.Add(-time.Hour), now.Add(time.Hour))
	c.Expired, c.ExpiredKey = writeLeaf(t, dir, "expired", caCert, caKey, []string{"localhost", "127.0.0.1"}, now.Add(-2*time.Hour), now.Add(-time.Hour))
	c.WrongHost, c.WrongHostKey = writeLeaf(t, dir, "wronghost", caCert, caKey, []string{"wrong.example"}, now.Add(-time.Hour), now.Add(time.Hour))
	return c
}

// writeLeaf writes a server certificate for hosts (names and addresses),
// valid from notBefore to notAfter, signed by ca, and its key.
func writeLeaf(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: hosts[0]},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	cert, key := sign(t, tmpl, ca, caKey)
	certFile, keyFile = writeKeyPair(t, dir, name, cert.Raw, key)
	// Readable by a server's workers, which may run as another user (the
	// keys are throwaway).
	os.Chmod(certFile, 0o644)
	os.Chmod(keyFile, 0o644)
	return certFile, keyFile
}

func writeKeyPair(t testing.TB, dir, name string, certDER []byte, key *ecdsa.PrivateKey) (certFile, keyFile string) {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", certDER)
	writePEM(t, keyFile, "EC PRIVATE KEY", der)
	return certFile, keyFile
}

func writePair(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) (certFile, keyFile string) {
	t.Helper()
	cert, key := issue(t, ca, caKey, cn, false)
	return writeKeyPair(t, dir, name, cert.Raw, key)
}

func issue(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, ca bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = nil, nil
	}
	if ip := net.ParseIP(cn); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	return sign(t, tmpl, parent, parentKey)
}

// sign makes a P-256 key and the certificate of tmpl for it (with a random
// serial number), signed by parent, or by itself when parent is nil.
func sign(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
