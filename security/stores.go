package security

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/connect-init/connect-init/workerconfig"
)

// Store types understood by Kafka's DefaultSslEngineFactory.
const (
	storeJKS    = "JKS"
	storePKCS12 = "PKCS12"
	storePEM    = "PEM"
)

// secretValue is a setting that was explicitly set (even to ""), as Kafka's
// Password config: Kafka distinguishes "not set" from "set".
type secretValue struct {
	set   bool
	value string
}

func propSecret(props workerconfig.Properties, key string) secretValue {
	v, ok := props[key]
	if !ok {
		return secretValue{}
	}
	// ConfigDef trims PASSWORD values like strings (Java String.trim), and
	// a present but empty value is a set, empty password.
	return secretValue{set: true, value: strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })}
}

// propString returns a trimmed string setting; "" means not set.
func propString(props workerconfig.Properties, key string) string {
	return strings.TrimSpace(props[key])
}

// loadTrust builds the pool of trusted CA certificates from ssl.truststore.*
// settings with Kafka's rules (DefaultSslEngineFactory.createTruststore).
// A nil pool means "no truststore configured": use the system roots, as the
// JVM uses its default cacerts.
func loadTrust(props workerconfig.Properties) (*x509.CertPool, error) {
	ts := trustStoreSettings{
		typ:      strings.ToUpper(props.Get("ssl.truststore.type", storeJKS)),
		location: propString(props, "ssl.truststore.location"),
		password: propSecret(props, "ssl.truststore.password"),
		certsPEM: propSecret(props, "ssl.truststore.certificates"),
	}

	switch {
	case ts.certsPEM.set && strings.TrimSpace(ts.certsPEM.value) != "":
		return ts.inlinePEMPool()
	case ts.location == "":
		if ts.password.set && ts.password.value != "" {
			return nil, cfgErr("ssl.truststore.password", "is set but ssl.truststore.location is not", "",
				"set ssl.truststore.location or remove the password")
		}
		return nil, nil
	}
	return ts.filePool()
}

// trustStoreSettings are the ssl.truststore.* settings loadTrust reads,
// kept together so each way of configuring a truststore is its own step.
type trustStoreSettings struct {
	typ      string
	location string
	password secretValue
	certsPEM secretValue
}

// inlinePEMPool is the truststore given as PEM text in
// ssl.truststore.certificates, which Kafka allows only with type PEM and
// without a location or password.
func (ts trustStoreSettings) inlinePEMPool() (*x509.CertPool, error) {
	if ts.typ != storePEM {
		return nil, cfgErr("ssl.truststore.certificates", "can only be used with ssl.truststore.type=PEM", "",
			"set ssl.truststore.type=PEM (it is "+ts.typ+")")
	}
	if ts.location != "" {
		return nil, cfgErr("ssl.truststore.certificates", "is set together with ssl.truststore.location", "",
			"set only one of them")
	}
	if ts.password.set {
		return nil, cfgErr("ssl.truststore.password", "cannot be used with ssl.truststore.type=PEM", "",
			"remove ssl.truststore.password")
	}
	certs, err := parsePEMCerts([]byte(ts.certsPEM.value))
	if err != nil {
		return nil, cfgErr("ssl.truststore.certificates", "holds no usable PEM certificate: "+err.Error(), "",
			"put the CA certificates as -----BEGIN CERTIFICATE----- blocks")
	}
	return poolOf(certs), nil
}

// filePool is the truststore read from ssl.truststore.location, parsed
// according to ssl.truststore.type.
func (ts trustStoreSettings) filePool() (*x509.CertPool, error) {
	location := ts.location
	data, err := os.ReadFile(location)
	if err != nil {
		return nil, cfgErr("ssl.truststore.location", "cannot be read: "+pathErr(err), location,
			"mount the truststore file into the container or fix the path")
	}
	switch ts.typ {
	case storePEM:
		if ts.password.set {
			return nil, cfgErr("ssl.truststore.password", "cannot be used with ssl.truststore.type=PEM", "",
				"remove ssl.truststore.password")
		}
		certs, err := parsePEMCerts(data)
		if err != nil {
			return nil, cfgErr("ssl.truststore.location", "holds no usable PEM certificate: "+err.Error(), location,
				"point it at a PEM file with the CA certificates, or set ssl.truststore.type to JKS or PKCS12")
		}
		return poolOf(certs), nil
	case storeJKS, storePKCS12:
		certs, err := readTrustStore(data, ts.password)
		if err != nil {
			return nil, storeErr("ssl.truststore", location, ts.typ, err)
		}
		if len(certs) == 0 {
			return nil, cfgErr("ssl.truststore.location", "holds no certificates", location,
				"import the CA that signed the broker certificates (keytool -importcert)")
		}
		return poolOf(certs), nil
	default:
		return nil, cfgErr("ssl.truststore.type", "is not supported", ts.typ, "use JKS, PKCS12 or PEM")
	}
}

// loadKeyPairs builds the client certificates (mutual TLS) from
// ssl.keystore.* with Kafka's rules (DefaultSslEngineFactory.createKeystore).
// It returns every key entry of the store in store order; crypto/tls then
// offers the first one the broker's CertificateRequest accepts, which is
// what Java's SunX509 key manager does.
func loadKeyPairs(props workerconfig.Properties) ([]tls.Certificate, error) {
	ks := keyStoreSettings{
		typ:         strings.ToUpper(props.Get("ssl.keystore.type", storeJKS)),
		location:    propString(props, "ssl.keystore.location"),
		password:    propSecret(props, "ssl.keystore.password"),
		keyPassword: propSecret(props, "ssl.key.password"),
		keyPEM:      propSecret(props, "ssl.keystore.key"),
		chainPEM:    propSecret(props, "ssl.keystore.certificate.chain"),
	}

	switch {
	case ks.keyPEM.set && strings.TrimSpace(ks.keyPEM.value) != "":
		return ks.inlinePEMPairs()
	case ks.chainPEM.set && strings.TrimSpace(ks.chainPEM.value) != "":
		return nil, cfgErr("ssl.keystore.certificate.chain", "is set but ssl.keystore.key is not", "",
			"set ssl.keystore.key to the client's private key in PEM")
	case ks.location == "":
		if ks.password.set && ks.password.value != "" {
			return nil, cfgErr("ssl.keystore.password", "is set but ssl.keystore.location is not", "",
				"set ssl.keystore.location or remove the password")
		}
		return nil, nil
	}
	return ks.filePairs()
}

// keyStoreSettings are the ssl.keystore.* and ssl.key.password settings
// loadKeyPairs reads, kept together so each way of configuring a keystore
// is its own step.
type keyStoreSettings struct {
	typ         string
	location    string
	password    secretValue
	keyPassword secretValue
	keyPEM      secretValue
	chainPEM    secretValue
}

// inlinePEMPairs is the key pair given as PEM text in ssl.keystore.key and
// ssl.keystore.certificate.chain, which Kafka allows only with type PEM,
// both set, and no location or store password.
func (ks keyStoreSettings) inlinePEMPairs() ([]tls.Certificate, error) {
	if ks.typ != storePEM {
		return nil, cfgErr("ssl.keystore.key", "can only be used with ssl.keystore.type=PEM", "",
			"set ssl.keystore.type=PEM (it is "+ks.typ+")")
	}
	if !ks.chainPEM.set || strings.TrimSpace(ks.chainPEM.value) == "" {
		return nil, cfgErr("ssl.keystore.certificate.chain", "is not set but ssl.keystore.key is", "",
			"set ssl.keystore.certificate.chain to the client certificate chain in PEM")
	}
	if ks.location != "" {
		return nil, cfgErr("ssl.keystore.key", "is set together with ssl.keystore.location", "",
			"set only one of them")
	}
	if ks.password.set {
		return nil, cfgErr("ssl.keystore.password", "cannot be used with ssl.keystore.type=PEM (only ssl.key.password can)", "",
			"remove ssl.keystore.password")
	}
	c, err := pemKeyPair([]byte(ks.keyPEM.value), []byte(ks.chainPEM.value), ks.keyPassword, "ssl.keystore.key")
	if err != nil {
		return nil, err
	}
	return []tls.Certificate{c}, nil
}

// filePairs are the key pairs read from ssl.keystore.location, parsed
// according to ssl.keystore.type.
func (ks keyStoreSettings) filePairs() ([]tls.Certificate, error) {
	location, password, keyPassword := ks.location, ks.password, ks.keyPassword
	if ks.typ != storePEM && !password.set {
		return nil, cfgErr("ssl.keystore.password", "is not set but ssl.keystore.location is", "",
			"set ssl.keystore.password (Kafka requires it for JKS and PKCS12 key stores)")
	}
	data, err := os.ReadFile(location)
	if err != nil {
		return nil, cfgErr("ssl.keystore.location", "cannot be read: "+pathErr(err), location,
			"mount the keystore file into the container or fix the path")
	}
	switch ks.typ {
	case storePEM:
		if password.set {
			return nil, cfgErr("ssl.keystore.password", "cannot be used with ssl.keystore.type=PEM (only ssl.key.password can)", "",
				"remove ssl.keystore.password")
		}
		c, err := pemKeyPair(data, data, keyPassword, "ssl.keystore.location")
		if err != nil {
			return nil, err
		}
		return []tls.Certificate{c}, nil
	case storeJKS, storePKCS12:
		kp := password.value
		if keyPassword.set {
			kp = keyPassword.value
		}
		pairs, err := readKeyStore(data, password.value, kp)
		if err != nil {
			return nil, storeErr("ssl.keystore", location, ks.typ, err)
		}
		if len(pairs) == 0 {
			return nil, cfgErr("ssl.keystore.location", "holds no private key entry", location,
				"import the client key and certificate chain into the keystore")
		}
		return pairs, nil
	default:
		return nil, cfgErr("ssl.keystore.type", "is not supported", ks.typ, "use JKS, PKCS12 or PEM")
	}
}

// Store reading errors, kept free of secrets.
var (
	errWrongStorePassword = errors.New("wrong store password (or the file is corrupt)")
	errWrongKeyPassword   = errors.New("the private key cannot be decrypted with the key password")
	errNoStorePassword    = errors.New("the store is password-protected but no password is set; the JVM would load it without its certificates")
	errMultipleKeys       = errors.New("the PKCS12 store holds more than one private key and Go's PKCS12 reader cannot tell their certificates apart; keep one key entry (keytool -delete) or use JKS or PEM")
)

type badFormatError struct{ detail string }

func (e *badFormatError) Error() string { return "not a readable JKS or PKCS12 store: " + e.detail }

func storeErr(prefix, location, typ string, err error) error {
	switch {
	case errors.Is(err, errWrongStorePassword):
		return cfgErr(prefix+".password", "does not open "+prefix+".location ("+location+")", "",
			"set the password the store was created with")
	case errors.Is(err, errNoStorePassword):
		return cfgErr(prefix+".password", "is not set, but "+prefix+".location ("+location+") is password-protected", "",
			"set "+prefix+".password")
	case errors.Is(err, errWrongKeyPassword):
		return cfgErr("ssl.key.password", "does not decrypt the private key in ssl.keystore.location ("+location+")", "",
			"set ssl.key.password to the key's password (it defaults to ssl.keystore.password)")
	default:
		return cfgErr(prefix+".location", "cannot be used as a "+typ+" store: "+err.Error(), location,
			"check the file and "+prefix+".type")
	}
}

// isJKS reports whether data starts with the JKS magic number. The JDK
// (since 9, keystore.type.compat) reads JKS and PKCS12 files whichever of
// the two types is configured, so we look at the content, not the type.
func isJKS(data []byte) bool {
	return len(data) >= 4 && bytes.Equal(data[:4], []byte{0xFE, 0xED, 0xFE, 0xED})
}

func isJCEKS(data []byte) bool {
	return len(data) >= 4 && bytes.Equal(data[:4], []byte{0xCE, 0xCE, 0xCE, 0xCE})
}

// readTrustStore returns the trusted certificates of a JKS or PKCS12 file:
// trusted-certificate entries and, as Java's TrustManagerFactory does, the
// end-entity certificate of each key entry.
func readTrustStore(data []byte, password secretValue) ([]*x509.Certificate, error) {
	if isJCEKS(data) {
		return nil, &badFormatError{"JCEKS stores are not supported; convert with keytool -importkeystore -deststoretype PKCS12"}
	}
	if isJKS(data) {
		return readJKSTrustStore(data, password)
	}
	return readPKCS12TrustStore(data, password)
}

// readJKSTrustStore is readTrustStore for a JKS file, which keystore-go
// reads with Java's leniency about an unset password.
func readJKSTrustStore(data []byte, password secretValue) ([]*x509.Certificate, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	err := ks.Load(bytes.NewReader(data), []byte(password.value))
	if err != nil {
		// keystore-go fills the entries before it checks the integrity
		// digest. Java skips that check when no password is given, so
		// an unset password with a digest mismatch is accepted.
		if !(err.Error() == "got invalid digest" && !password.set) {
			if err.Error() == "got invalid digest" {
				return nil, errWrongStorePassword
			}
			return nil, &badFormatError{err.Error()}
		}
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var raw []byte
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, &badFormatError{err.Error()}
			}
			raw = e.Certificate.Content
		case ks.IsPrivateKeyEntry(alias):
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil || len(chain) == 0 {
				continue
			}
			raw = chain[0].Content
		default:
			continue
		}
		c, err := x509.ParseCertificate(raw)
		if err != nil {
			return nil, &badFormatError{"certificate of entry " + alias + ": " + err.Error()}
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// readPKCS12TrustStore is readTrustStore for a PKCS12 file, falling back to
// the store's key entry when go-pkcs12 will not read it as a truststore.
func readPKCS12TrustStore(data []byte, password secretValue) ([]*x509.Certificate, error) {
	// PKCS12. A store without a password needs "" (go-pkcs12 caveat).
	certs, err := pkcs12.DecodeTrustStore(data, password.value)
	if err == nil {
		return certs, nil
	}
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		if !password.set {
			return nil, errNoStorePassword
		}
		return nil, errWrongStorePassword
	}
	// DecodeTrustStore refuses stores that also hold a key (or certificates
	// without Java's trust attribute). Fall back to reading the store as a
	// key store and trust its certificates.
	_, leaf, cas, err2 := pkcs12.DecodeChain(data, password.value)
	if err2 == nil {
		return append([]*x509.Certificate{leaf}, cas...), nil
	}
	if errors.Is(err2, pkcs12.ErrIncorrectPassword) {
		return nil, errWrongStorePassword
	}
	return nil, &badFormatError{err.Error()}
}

// readKeyStore returns the key entries of a JKS or PKCS12 file as TLS
// certificates, each with its chain ordered leaf first.
func readKeyStore(data []byte, storePassword, keyPassword string) ([]tls.Certificate, error) {
	if isJCEKS(data) {
		return nil, &badFormatError{"JCEKS stores are not supported; convert with keytool -importkeystore -deststoretype PKCS12"}
	}
	if isJKS(data) {
		return readJKSKeyStore(data, storePassword, keyPassword)
	}
	return readPKCS12KeyStore(data, storePassword, keyPassword)
}

// readJKSKeyStore is readKeyStore for a JKS file, where the keys are
// decrypted with keyPassword apart from the store password.
func readJKSKeyStore(data []byte, storePassword, keyPassword string) ([]tls.Certificate, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(storePassword)); err != nil {
		if err.Error() == "got invalid digest" {
			return nil, errWrongStorePassword
		}
		return nil, &badFormatError{err.Error()}
	}
	var out []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
		if err != nil {
			return nil, errWrongKeyPassword
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, &badFormatError{"private key of entry " + alias + ": " + err.Error()}
		}
		var chain []*x509.Certificate
		for _, c := range e.CertificateChain {
			pc, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, &badFormatError{"certificate of entry " + alias + ": " + err.Error()}
			}
			chain = append(chain, pc)
		}
		tc, err := keyPair(key, chain)
		if err != nil {
			return nil, &badFormatError{"entry " + alias + ": " + err.Error()}
		}
		out = append(out, tc)
	}
	return out, nil
}

// readPKCS12KeyStore is readKeyStore for a PKCS12 file, which go-pkcs12
// reads with a single password and a single key.
func readPKCS12KeyStore(data []byte, storePassword, keyPassword string) ([]tls.Certificate, error) {
	// PKCS12: keytool uses one password for the store and its keys; the
	// JVM decrypts keys with ssl.key.password (defaulting to the store
	// password). go-pkcs12 uses one password for both, so they must agree.
	key, leaf, cas, err := pkcs12.DecodeChain(data, storePassword)
	if err != nil {
		switch {
		case errors.Is(err, pkcs12.ErrIncorrectPassword):
			return nil, errWrongStorePassword
		case strings.Contains(err.Error(), "expected exactly one key bag"):
			return nil, errMultipleKeys
		case strings.Contains(err.Error(), "private key missing"):
			return nil, nil
		}
		return nil, &badFormatError{err.Error()}
	}
	if keyPassword != storePassword {
		return nil, errWrongKeyPassword
	}
	tc, err := keyPair(key, append([]*x509.Certificate{leaf}, cas...))
	if err != nil {
		return nil, &badFormatError{err.Error()}
	}
	return []tls.Certificate{tc}, nil
}

// keyPair orders certs into the chain of key: the certificate holding the
// key's public key first, then each issuer found among the others. Stores
// do not reliably keep chain order (go-pkcs12 takes "the first certificate"
// as the leaf), so the order is rebuilt.
func keyPair(key any, certs []*x509.Certificate) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, errors.New("unsupported private key type")
	}
	leafIdx := -1
	for i, c := range certs {
		if publicKeysEqual(c.PublicKey, signer.Public()) {
			leafIdx = i
			break
		}
	}
	if leafIdx < 0 {
		return tls.Certificate{}, errors.New("no certificate matches the private key")
	}
	used := map[int]bool{leafIdx: true}
	chain := []*x509.Certificate{certs[leafIdx]}
	for {
		last := chain[len(chain)-1]
		if bytes.Equal(last.RawIssuer, last.RawSubject) {
			break
		}
		found := false
		for i, c := range certs {
			if !used[i] && bytes.Equal(c.RawSubject, last.RawIssuer) {
				used[i] = true
				chain = append(chain, c)
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	tc := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		tc.Certificate = append(tc.Certificate, c.Raw)
	}
	return tc, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if e, ok := a.(equaler); ok {
		return e.Equal(b)
	}
	return false
}

// pemEntry is one PEM block found the way Kafka's PemParser finds it.
type pemEntry struct {
	label string // the text between BEGIN and the name, e.g. "ENCRYPTED " or "RSA "
	der   []byte
}

// kafkaPEMPattern ports DefaultSslEngineFactory.PemParser: it tolerates
// any whitespace (including none but a space) between base64 lines, so a
// PEM value squeezed onto one line of an environment variable still works,
// as it does for the worker.
func kafkaPEMPattern(name string) *regexp.Regexp {
	nameRE := strings.ReplaceAll(name, " ", `\s+`)
	begin := `-+BEGIN\s*(.*)` + nameRE + `[^-]*-+\s+`
	end := `-+END\s*.*` + nameRE + `[^-]*-+\s+`
	params := `(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*`
	return regexp.MustCompile(begin + params + `([a-zA-Z0-9/+=\s]*)` + end)
}

var (
	pemCertRE = kafkaPEMPattern("CERTIFICATE")
	pemKeyRE  = kafkaPEMPattern("PRIVATE KEY")
)

func pemEntries(re *regexp.Regexp, data []byte) ([]pemEntry, error) {
	var out []pemEntry
	for _, m := range re.FindAllSubmatch(append(append([]byte{}, data...), '\n'), -1) {
		b64 := strings.Join(strings.Fields(string(m[2])), "")
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is not valid base64", len(out)+1)
		}
		out = append(out, pemEntry{label: strings.TrimSpace(string(m[1])), der: der})
	}
	return out, nil
}

func parsePEMCerts(data []byte) ([]*x509.Certificate, error) {
	entries, err := pemEntries(pemCertRE, data)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errors.New("no -----BEGIN CERTIFICATE----- block found")
	}
	var certs []*x509.Certificate
	for i, e := range entries {
		c, err := x509.ParseCertificate(e.der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %v", i+1, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// pemKeyPair reads a PEM private key and certificate chain as Kafka's
// PemStore does: exactly one PKCS#8 key, read as encrypted PKCS#8 when
// ssl.key.password is set and as plain PKCS#8 when it is not.
func pemKeyPair(keyData, chainData []byte, keyPassword secretValue, keyProp string) (tls.Certificate, error) {
	entries, err := pemEntries(pemKeyRE, keyData)
	if err != nil {
		return tls.Certificate{}, cfgErr(keyProp, "holds a malformed PEM private key: "+err.Error(), "", "re-export the key")
	}
	switch {
	case len(entries) == 0:
		return tls.Certificate{}, cfgErr(keyProp, "holds no PEM private key", "",
			"provide the key as -----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----")
	case len(entries) > 1:
		return tls.Certificate{}, cfgErr(keyProp, fmt.Sprintf("holds %d private keys, Kafka expects exactly one", len(entries)), "",
			"keep only the client's key")
	}
	e := entries[0]
	var key any
	switch {
	case e.label != "" && e.label != "ENCRYPTED":
		return tls.Certificate{}, cfgErr(keyProp, "holds a '"+e.label+" PRIVATE KEY' block; Kafka reads only PKCS#8 keys (PRIVATE KEY or ENCRYPTED PRIVATE KEY)", "",
			"convert the key with: openssl pkcs8 -topk8 -in key.pem (add -nocrypt for an unencrypted key)")
	case !keyPassword.set:
		if e.label == "ENCRYPTED" {
			return tls.Certificate{}, cfgErr("ssl.key.password", "is not set but the PEM private key is encrypted", "",
				"set ssl.key.password to the key's passphrase")
		}
		key, err = x509.ParsePKCS8PrivateKey(e.der)
		if err != nil {
			return tls.Certificate{}, cfgErr(keyProp, "holds a PRIVATE KEY block that is not valid PKCS#8", "", "re-export the key as PKCS#8")
		}
	default:
		if e.label == "" {
			return tls.Certificate{}, cfgErr("ssl.key.password", "is set but the PEM private key is not encrypted", "",
				"remove ssl.key.password, or encrypt the key (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
		}
		key, err = pkcs8.ParsePKCS8PrivateKey(e.der, []byte(keyPassword.value))
		if err != nil {
			return tls.Certificate{}, cfgErr("ssl.key.password", "does not decrypt the PEM private key (or its encryption is not supported)", "",
				"set the key's passphrase; keys must be PKCS#8 with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
		}
	}
	switch key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
	default:
		return tls.Certificate{}, cfgErr(keyProp, "holds an unsupported key type", "", "use an RSA or EC key")
	}
	chainProp := keyProp
	if keyProp == "ssl.keystore.key" {
		chainProp = "ssl.keystore.certificate.chain"
	}
	certs, err := parsePEMCerts(chainData)
	if err != nil {
		return tls.Certificate{}, cfgErr(chainProp, "holds no usable certificate: "+err.Error(), "",
			"provide the client certificate chain as -----BEGIN CERTIFICATE----- blocks")
	}
	tc, err := keyPair(key, certs)
	if err != nil {
		return tls.Certificate{}, cfgErr(chainProp, "does not fit the private key: "+err.Error(), "",
			"use the certificate issued for this key")
	}
	return tc, nil
}

func poolOf(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
