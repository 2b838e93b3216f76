package security

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/xdg-go/scram"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/connect-init/connect-init/workerconfig"
)

// Login module class names (the simple name is compared, so relocated or
// vendor copies of Kafka's modules are accepted).
const (
	modPlain  = "PlainLoginModule"
	modScram  = "ScramLoginModule"
	modOAuth  = "OAuthBearerLoginModule"
	modKrb5   = "Krb5LoginModule"
	jaasProp  = "sasl.jaas.config"
	mechProp  = "sasl.mechanism"
	krbSvcKey = "sasl.kerberos.service.name"
)

// OAUTHBEARER login callback handlers that connect-init implements.
const (
	handlerSecured       = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	handlerSecuredLegacy = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	handlerUnsecured     = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)

func simpleName(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// configureSASL fills cfg.Net.SASL from the sasl.* settings.
func configureSASL(cfg *sarama.Config, props workerconfig.Properties, opts Options) error {
	mech := props.Get(mechProp, "GSSAPI") // Kafka's default (SaslConfigs.DEFAULT_SASL_MECHANISM)
	if err := checkMechanism(mech); err != nil {
		return err
	}
	if err := refuseCustomClasses(props); err != nil {
		return err
	}
	entry, source, err := jaasEntry(props, opts)
	if err != nil {
		return err
	}
	if err := checkModule(mech, entry, source); err != nil {
		return err
	}

	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	cfg.Net.SASL.Mechanism = sarama.SASLMechanism(mech)
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		return configurePasswordLogin(cfg, mech, entry, source)
	case "OAUTHBEARER":
		p, err := oauthProvider(props, entry, source, opts)
		if err != nil {
			return err
		}
		cfg.Net.SASL.TokenProvider = p
	case "GSSAPI":
		g, err := gssapiConfig(props, entry, source, opts)
		if err != nil {
			return err
		}
		cfg.Net.SASL.GSSAPI = g
	}
	return nil
}

// checkMechanism refuses a sasl.mechanism connect-init cannot speak, or one
// written in a case Kafka would not match.
func checkMechanism(mech string) error {
	switch strings.ToUpper(mech) {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI":
		if mech != strings.ToUpper(mech) {
			return cfgErr(mechProp, "must be upper case: SASL mechanism names are case-sensitive for Kafka", mech,
				"write "+strings.ToUpper(mech))
		}
	default:
		return cfgErr(mechProp, "is not supported by connect-init", mech,
			"use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or GSSAPI")
	}
	return nil
}

// refuseCustomClasses refuses the settings that name user Java classes for
// the SASL client, which connect-init cannot run.
func refuseCustomClasses(props workerconfig.Properties) error {
	for _, k := range []string{"sasl.client.callback.handler.class", "sasl.login.class"} {
		if v := props.Get(k, ""); v != "" {
			return cfgErr(k, "names a custom class, which connect-init cannot run", v,
				"remove it for connect-init, or use one of Kafka's built-in login modules")
		}
	}
	return nil
}

// configurePasswordLogin sets the user and password of PLAIN and SCRAM
// (mech) from the JAAS entry, and the SCRAM client for SCRAM.
func configurePasswordLogin(cfg *sarama.Config, mech string, entry JAASEntry, source string) error {
	user, pass := entry.Options["username"], entry.Options["password"]
	if user == "" {
		return cfgErr(source, "has no username option for "+mech, "", "add username=\"...\" to the login module options")
	}
	if _, ok := entry.Options["password"]; !ok {
		return cfgErr(source, "has no password option for "+mech, "", "add password=\"...\" to the login module options")
	}
	if strings.EqualFold(entry.Options["tokenauth"], "true") {
		return cfgErr(source, "uses delegation tokens (tokenauth=true), which connect-init does not support", "",
			"use SCRAM user credentials for connect-init")
	}
	cfg.Net.SASL.User = user
	cfg.Net.SASL.Password = pass
	switch mech {
	case "SCRAM-SHA-256":
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &SCRAMClient{Hash: scram.SHA256} }
	case "SCRAM-SHA-512":
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &SCRAMClient{Hash: scram.SHA512} }
	}
	if mech == "PLAIN" && pass == "" {
		return cfgErr(source, "has an empty password for PLAIN", "", "set the password option")
	}
	return nil
}

// jaasEntry finds the login module the worker would use: sasl.jaas.config,
// else the KafkaClient section of the static JAAS file named by
// -Djava.security.auth.login.config in KAFKA_OPTS.
func jaasEntry(props workerconfig.Properties, opts Options) (JAASEntry, string, error) {
	if v, ok := props[jaasProp]; ok && strings.TrimSpace(v) != "" {
		entries, err := ParseJAAS(v)
		if err != nil {
			return JAASEntry{}, "", cfgErr(jaasProp, "cannot be parsed: "+err.Error(), "",
				`use the form: LoginModuleClass required key="value" key2="value2";`)
		}
		return entries[0], jaasProp, nil
	}
	path := jvmSystemProperty(opts, "java.security.auth.login.config")
	if path == "" {
		return JAASEntry{}, "", cfgErr(jaasProp, "is not set (and KAFKA_OPTS names no -Djava.security.auth.login.config file)", "",
			`set sasl.jaas.config, e.g. org.apache.kafka.common.security.scram.ScramLoginModule required username="..." password="...";`)
	}
	path = strings.TrimPrefix(path, "=") // "==file" overrides instead of appending
	const prop = "KAFKA_OPTS -Djava.security.auth.login.config"
	data, err := os.ReadFile(path)
	if err != nil {
		return JAASEntry{}, "", cfgErr(prop, "names a JAAS file that cannot be read: "+pathErr(err), path,
			"mount the file or set sasl.jaas.config")
	}
	entries, found, err := ParseJAASFile(string(data), "KafkaClient")
	if err != nil {
		return JAASEntry{}, "", cfgErr(prop, "names a JAAS file that cannot be parsed: "+err.Error(), path, "fix the file")
	}
	if !found {
		return JAASEntry{}, "", cfgErr(prop, "names a JAAS file without a KafkaClient section", path,
			"add a KafkaClient { ... }; section or set sasl.jaas.config")
	}
	return entries[0], "the KafkaClient section of " + path, nil
}

func checkModule(mech string, e JAASEntry, source string) error {
	mod := simpleName(e.LoginModule)
	var want []string
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		// Kafka's PLAIN and SCRAM clients read the user and password from
		// the Subject, which both modules fill the same way, so the JVM
		// accepts either module with either mechanism.
		want = []string{modPlain, modScram}
	case "OAUTHBEARER":
		want = []string{modOAuth}
	case "GSSAPI":
		want = []string{modKrb5}
	}
	for _, w := range want {
		if mod == w {
			return nil
		}
	}
	return cfgErr(source, fmt.Sprintf("uses login module %s, which does not work with sasl.mechanism=%s", safeIdent(e.LoginModule), mech), "",
		"use "+strings.Join(want, " or ")+" for "+mech+", or change sasl.mechanism")
}

// jvmSystemProperty returns the last -Dname=value in KAFKA_OPTS (falling back
// to JAVA_TOOL_OPTIONS), as the worker's JVM would see it. kafka-run-class.sh
// expands $KAFKA_OPTS unquoted, so it is split on blanks without quoting.
func jvmSystemProperty(opts Options, name string) string {
	prefix := "-D" + name + "="
	for _, env := range []string{"KAFKA_OPTS", "JAVA_TOOL_OPTIONS"} {
		v, _ := opts.lookupEnv(env)
		val := ""
		for _, f := range strings.Fields(v) {
			if strings.HasPrefix(f, prefix) {
				val = strings.TrimPrefix(f, prefix)
			}
		}
		if val != "" {
			return val
		}
	}
	return ""
}

// SCRAMClient implements sarama.SCRAMClient with github.com/xdg-go/scram,
// since sarama ships none. Like Kafka's Java client it does not apply
// SASLprep to the credentials, so passwords the broker accepted from
// kafka-configs.sh work unchanged.
type SCRAMClient struct {
	// Hash is scram.SHA256 or scram.SHA512.
	Hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

// Begin starts a conversation for userName and password.
func (c *SCRAMClient) Begin(userName, password, authzID string) error {
	cl, err := c.Hash.NewClientUnprepped(userName, password, authzID)
	if err != nil {
		return errors.New("SCRAM: cannot start the conversation")
	}
	c.conv = cl.NewConversation()
	return nil
}

// Step answers one server challenge.
func (c *SCRAMClient) Step(challenge string) (string, error) {
	r, err := c.conv.Step(challenge)
	if err != nil {
		return "", fmt.Errorf("SCRAM: %w", err)
	}
	return r, nil
}

// Done reports whether the conversation is complete.
func (c *SCRAMClient) Done() bool { return c.conv != nil && c.conv.Done() }

// ---- OAUTHBEARER ----

// oauthProvider builds the OAUTHBEARER token source Kafka's login would
// use: the unsecured login, a token file, or the client-credentials
// grant against the token endpoint. What connect-init cannot run (a
// custom handler or retriever) is refused rather than guessed at.
func oauthProvider(props workerconfig.Properties, e JAASEntry, source string, opts Options) (sarama.AccessTokenProvider, error) {
	handler := props.Get("sasl.login.callback.handler.class", "")
	switch handler {
	case "", handlerUnsecured:
		// Kafka's default login callback handler for OAUTHBEARER is the
		// unsecured one (LoginManager).
		return unsecuredOAuth(props, e, source, opts)
	case handlerSecured, handlerSecuredLegacy:
	default:
		return nil, cfgErr("sasl.login.callback.handler.class", "is a custom login callback handler, which connect-init cannot run", handler,
			"use "+handlerSecured)
	}
	if r := props.Get("sasl.oauthbearer.jwt.retriever.class", ""); r != "" {
		switch simpleName(r) {
		case "DefaultJwtRetriever", "ClientCredentialsJwtRetriever", "FileJwtRetriever":
		default:
			return nil, cfgErr("sasl.oauthbearer.jwt.retriever.class", "is not supported by connect-init", r,
				"use the client-credentials or file token retrieval")
		}
	}
	raw, u, err := tokenEndpoint(props)
	if err != nil {
		return nil, err
	}
	ext := jaasExtensions(e)
	if strings.EqualFold(u.Scheme, "file") {
		return &fileTokenProvider{path: u.Path, extensions: ext}, nil
	}
	return clientCredentialsProvider(props, e, source, opts, raw, u, ext)
}

// unsecuredOAuth is Kafka's unsecured OAUTHBEARER login, which signs
// nothing and only needs a subject; without one, the fix depends on
// whether the user meant the secured login (a token endpoint is set).
func unsecuredOAuth(props workerconfig.Properties, e JAASEntry, source string, opts Options) (sarama.AccessTokenProvider, error) {
	if _, ok := e.Options["unsecuredLoginStringClaim_sub"]; !ok && e.Options["unsecuredLoginPrincipalClaimName"] == "" {
		fix := "add unsecuredLoginStringClaim_sub=\"<principal>\" for a broker with unsecured validation"
		if props.Get("sasl.oauthbearer.token.endpoint.url", "") != "" {
			fix = "set sasl.login.callback.handler.class=" + handlerSecured + " to use sasl.oauthbearer.token.endpoint.url"
		}
		return nil, cfgErr(source, "gives the unsecured OAUTHBEARER login (the default when sasl.login.callback.handler.class is not set) no subject claim", "", fix)
	}
	p, err := newUnsecuredProvider(e.Options, opts.now)
	if err != nil {
		return nil, cfgErr(source, "has invalid unsecured OAUTHBEARER options: "+err.Error(), "", "fix the unsecuredLogin* options")
	}
	return p, nil
}

// tokenEndpoint reads sasl.oauthbearer.token.endpoint.url, which the
// secured login cannot do without; the URL is never echoed, since it may
// carry credentials. It returns the URL as written and parsed.
func tokenEndpoint(props workerconfig.Properties) (string, *url.URL, error) {
	raw := props.Get("sasl.oauthbearer.token.endpoint.url", "")
	if raw == "" {
		return "", nil, cfgErr("sasl.oauthbearer.token.endpoint.url", "is not set", "",
			"set it to the identity provider's token endpoint (or a file:// URL holding a token)")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", nil, cfgErr("sasl.oauthbearer.token.endpoint.url", "is not a valid URL", "", "use https://host/path or file:///path")
	}
	if !strings.EqualFold(u.Scheme, "file") && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return "", nil, cfgErr("sasl.oauthbearer.token.endpoint.url", "has an unsupported scheme "+u.Scheme, "", "use https://, http:// or file://")
	}
	return raw, u, nil
}

// jaasExtensions are the JAAS entry's extension_NAME options, which
// Kafka sends to the broker with the token as SASL extensions.
func jaasExtensions(e JAASEntry) map[string]string {
	ext := map[string]string{}
	for k, v := range e.Options {
		if strings.HasPrefix(k, "extension_") && len(k) > len("extension_") {
			ext[strings.TrimPrefix(k, "extension_")] = v
		}
	}
	return ext
}

// clientCredentialsProvider is the secured login's client-credentials
// grant against the token endpoint (raw, parsed as u). The client id and secret go in a
// Basic header, url-encoded first when sasl.oauthbearer.header.urlencode
// says so, as Kafka sends them.
func clientCredentialsProvider(props workerconfig.Properties, e JAASEntry, source string, opts Options, raw string, u *url.URL, ext map[string]string) (sarama.AccessTokenProvider, error) {
	// Kafka 4.1 (KIP-1139) moved the credentials to client properties; the
	// JAAS options still work and lose to the properties.
	id := firstNonEmpty(props.Get("sasl.oauthbearer.client.credentials.client.id", ""), e.Options["clientId"])
	secret := firstNonEmpty(props["sasl.oauthbearer.client.credentials.client.secret"], e.Options["clientSecret"])
	scope := firstNonEmpty(props.Get("sasl.oauthbearer.scope", ""), e.Options["scope"])
	if strings.TrimSpace(id) == "" {
		return nil, cfgErr(source, "has no clientId (and sasl.oauthbearer.client.credentials.client.id is not set)", "",
			"set the OAuth client id")
	}
	if strings.TrimSpace(secret) == "" {
		return nil, cfgErr(source, "has no clientSecret (and sasl.oauthbearer.client.credentials.client.secret is not set)", "",
			"set the OAuth client secret")
	}
	client := opts.HTTPClient
	if client == nil {
		var err error
		if client, err = tokenHTTPClient(props, e); err != nil {
			return nil, err
		}
	}
	urlencode := strings.EqualFold(props.Get("sasl.oauthbearer.header.urlencode", "false"), "true")
	cc := &clientcredentials.Config{
		ClientID:     id,
		ClientSecret: secret,
		TokenURL:     raw,
		AuthStyle:    oauth2.AuthStyleInHeader,
	}
	if s := strings.TrimSpace(scope); s != "" {
		cc.Scopes = []string{s}
	}
	hc := *client
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &basicAuthTransport{base: base, id: id, secret: secret, urlencode: urlencode}
	return &TokenProvider{
		source:     cc,
		client:     &hc,
		endpoint:   redactURL(u),
		extensions: ext,
		timeout:    client.Timeout,
	}, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// tokenHTTPClient builds the HTTP client for the token endpoint with
// sasl.login.connect.timeout.ms / sasl.login.read.timeout.ms, and the TLS
// settings Kafka takes from ssl.* options inside the JAAS entry
// (JaasOptionsUtils); without them the system roots are used, as the JVM
// uses its default truststore.
func tokenHTTPClient(props workerconfig.Properties, e JAASEntry) (*http.Client, error) {
	connect, err := props.Int("sasl.login.connect.timeout.ms", 10000)
	if err != nil {
		return nil, err
	}
	read, err := props.Int("sasl.login.read.timeout.ms", 30000)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: time.Duration(connect) * time.Millisecond}).DialContext
	tr.ResponseHeaderTimeout = time.Duration(read) * time.Millisecond
	sslOpts := workerconfig.Properties{}
	for k, v := range e.Options {
		if strings.HasPrefix(k, "ssl.") {
			sslOpts[k] = v
		}
	}
	if len(sslOpts) > 0 {
		tc, err := TLSConfig(sslOpts)
		if err != nil {
			var we *workerconfig.Error
			if errors.As(err, &we) {
				we.Problem = "(in the sasl.jaas.config ssl.* options for the token endpoint) " + we.Problem
				we.Value = ""
			}
			return nil, err
		}
		tr.TLSClientConfig = tc
	}
	return &http.Client{Transport: tr, Timeout: time.Duration(connect+read) * time.Millisecond}, nil
}

// basicAuthTransport rewrites the Basic authorization header the way
// Kafka's HttpAccessTokenRetriever writes it: the raw client id and secret
// unless sasl.oauthbearer.header.urlencode=true (x/oauth2 always
// URL-encodes them, which breaks secrets with special characters).
type basicAuthTransport struct {
	base       http.RoundTripper
	id, secret string
	urlencode  bool
}

func (t *basicAuthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	id, secret := t.id, t.secret
	if t.urlencode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	r.SetBasicAuth(id, secret)
	return t.base.RoundTrip(r)
}

// TokenProvider implements sarama.AccessTokenProvider with the OAuth
// client-credentials grant, as Kafka's OAuthBearerLoginCallbackHandler
// does. Tokens are cached until shortly before they expire, so every
// broker connection does not cost a token request.
type TokenProvider struct {
	source     *clientcredentials.Config
	client     *http.Client
	endpoint   string
	extensions map[string]string
	timeout    time.Duration

	mu     sync.Mutex
	cached *oauth2.Token
}

// Token returns a valid access token, fetching a new one when needed.
// Errors name the endpoint and the identity provider's error code but never
// the client secret or a token.
func (p *TokenProvider) Token() (*sarama.AccessToken, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cached != nil && p.cached.Valid() {
		return &sarama.AccessToken{Token: p.cached.AccessToken, Extensions: p.extensions}, nil
	}
	timeout := p.timeout
	if timeout <= 0 {
		timeout = 40 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, p.client)
	tok, err := p.source.Token(ctx)
	if err != nil {
		return nil, &TokenError{Endpoint: p.endpoint, cause: describeTokenErr(err)}
	}
	if tok.AccessToken == "" {
		return nil, &TokenError{Endpoint: p.endpoint, cause: "the response has no access_token"}
	}
	p.cached = tok
	return &sarama.AccessToken{Token: tok.AccessToken, Extensions: p.extensions}, nil
}

// TokenError is a failure to get an OAUTHBEARER token. It is a separate
// type so ExplainConnectError can name the identity provider, not the
// broker, as the cause.
type TokenError struct {
	Endpoint string
	cause    string
}

// Error names the endpoint and the cause; it never holds the secret or a token.
func (e *TokenError) Error() string {
	return "cannot get an OAUTHBEARER token from " + e.Endpoint + ": " + e.cause
}

func describeTokenErr(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		s := "the identity provider answered"
		if re.Response != nil {
			s += " HTTP " + strconv.Itoa(re.Response.StatusCode)
		}
		if re.ErrorCode != "" {
			s += " error=" + strconv.Quote(re.ErrorCode)
		}
		if re.ErrorDescription != "" {
			s += " (" + strconv.Quote(re.ErrorDescription) + ")"
		}
		if re.ErrorCode == "invalid_client" || (re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized) {
			s += "; check the client id and secret"
		}
		return s
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " failed: " + ue.Err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out (sasl.login.connect.timeout.ms / sasl.login.read.timeout.ms)"
	}
	// x/oauth2 errors other than RetrieveError carry no response body.
	return err.Error()
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// fileTokenProvider reads the token from a file on every call, as
// Kafka's FileTokenRetriever does for a file:// token endpoint URL.
type fileTokenProvider struct {
	path       string
	extensions map[string]string
}

func (p *fileTokenProvider) Token() (*sarama.AccessToken, error) {
	b, err := os.ReadFile(p.path)
	if err != nil {
		return nil, &TokenError{Endpoint: "file " + p.path, cause: pathErr(err)}
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return nil, &TokenError{Endpoint: "file " + p.path, cause: "the file is empty"}
	}
	return &sarama.AccessToken{Token: t, Extensions: p.extensions}, nil
}

// UnsecuredToken builds the unsigned JWT (alg "none") that Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler builds from unsecuredLogin*
// JAAS options; brokers with the unsecured validator (test and development
// setups) accept it.
func UnsecuredToken(options map[string]string, now time.Time) (string, error) {
	lifetime := int64(3600)
	if v := strings.TrimSpace(options["unsecuredLoginLifetimeSeconds"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", errors.New("unsecuredLoginLifetimeSeconds is not a whole number")
		}
		lifetime = n
	}
	principalClaim := strings.TrimSpace(options["unsecuredLoginPrincipalClaimName"])
	if principalClaim == "" {
		principalClaim = "sub"
	}
	nowSec := float64(now.UnixMilli()) / 1000
	claims := map[string]any{
		"iat": nowSec,
		"exp": nowSec + float64(lifetime),
	}
	for k, v := range options {
		var name string
		switch {
		case strings.HasPrefix(k, "unsecuredLoginStringClaim_") && len(k) > len("unsecuredLoginStringClaim_"):
			name = strings.TrimPrefix(k, "unsecuredLoginStringClaim_")
			claims[name] = v
		case strings.HasPrefix(k, "unsecuredLoginNumberClaim_") && len(k) > len("unsecuredLoginNumberClaim_"):
			name = strings.TrimPrefix(k, "unsecuredLoginNumberClaim_")
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return "", fmt.Errorf("%s is not a number", safeIdent(k))
			}
			claims[name] = f
		case strings.HasPrefix(k, "unsecuredLoginListClaim_") && len(k) > len("unsecuredLoginListClaim_"):
			name = strings.TrimPrefix(k, "unsecuredLoginListClaim_")
			claims[name] = listClaim(v)
		default:
			continue
		}
		if name == "iat" || name == "exp" {
			return "", fmt.Errorf("cannot explicitly set the '%s' claim", name)
		}
	}
	if s, _ := claims[principalClaim].(string); strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("no principal name in JWT claim %s", safeIdent(principalClaim))
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(payload) + ".", nil
}

// listClaim splits v on its first character, as Kafka's unsecured login
// handler does ("|a|b" -> ["a","b"]); empty elements are dropped.
func listClaim(v string) []string {
	out := []string{}
	if len([]rune(v)) <= 1 {
		return out
	}
	r := []rune(v)
	for _, e := range strings.Split(string(r[1:]), string(r[0])) {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

type unsecuredProvider struct {
	options    map[string]string
	now        func() time.Time
	extensions map[string]string
}

func newUnsecuredProvider(options map[string]string, now func() time.Time) (*unsecuredProvider, error) {
	if _, err := UnsecuredToken(options, now()); err != nil {
		return nil, err
	}
	ext := map[string]string{}
	for k, v := range options {
		if strings.HasPrefix(k, "unsecuredLoginExtension_") && len(k) > len("unsecuredLoginExtension_") {
			ext[strings.TrimPrefix(k, "unsecuredLoginExtension_")] = v
		}
	}
	return &unsecuredProvider{options: options, now: now, extensions: ext}, nil
}

func (p *unsecuredProvider) Token() (*sarama.AccessToken, error) {
	t, err := UnsecuredToken(p.options, p.now())
	if err != nil {
		return nil, err
	}
	return &sarama.AccessToken{Token: t, Extensions: p.extensions}, nil
}

// ---- GSSAPI ----

func gssapiConfig(props workerconfig.Properties, e JAASEntry, source string, opts Options) (sarama.GSSAPIConfig, error) {
	var g sarama.GSSAPIConfig
	useKeyTab := strings.EqualFold(e.Options["useKeyTab"], "true")
	if !useKeyTab {
		what := "does not set useKeyTab=true"
		if strings.EqualFold(e.Options["useTicketCache"], "true") {
			what = "uses only the Kerberos ticket cache (useTicketCache=true), which connect-init does not support"
		}
		return g, cfgErr(source, what, "", `use useKeyTab=true keyTab="/path/to.keytab" principal="name@REALM"`)
	}
	kt := e.Options["keyTab"]
	principal := e.Options["principal"]
	if kt == "" || principal == "" {
		return g, cfgErr(source, "needs keyTab and principal options with useKeyTab=true", "",
			`add keyTab="/path/to.keytab" principal="name@REALM"`)
	}
	svcProp := props.Get(krbSvcKey, "")
	svcJAAS := e.Options["serviceName"]
	switch {
	case svcProp != "" && svcJAAS != "" && svcProp != svcJAAS:
		return g, cfgErr(krbSvcKey, "conflicts with the serviceName option of "+source, svcProp, "set the same value in both, or only one")
	case svcProp == "" && svcJAAS == "":
		return g, cfgErr(krbSvcKey, "is not set (nor serviceName in the JAAS options)", "", "set it to the brokers' Kerberos service name, usually kafka")
	}
	g.ServiceName = firstNonEmpty(svcProp, svcJAAS)

	krb5conf := firstNonEmpty(jvmSystemProperty(opts, "java.security.krb5.conf"), "/etc/krb5.conf")
	kc, err := krb5config.Load(krb5conf)
	if err != nil {
		return g, cfgErr("KAFKA_OPTS -Djava.security.krb5.conf", "names a krb5.conf that cannot be read: "+shortErr(err), krb5conf,
			"mount krb5.conf there, or point -Djava.security.krb5.conf at it")
	}
	if _, err := os.Stat(kt); err != nil {
		return g, cfgErr(source, "names a keyTab that cannot be read: "+pathErr(err), "", "mount the keytab at "+kt)
	}
	if _, err := keytab.Load(kt); err != nil {
		return g, cfgErr(source, "names a keyTab that is not a valid keytab file ("+kt+")", "", "regenerate the keytab")
	}
	user, realm, hasRealm := strings.Cut(principal, "@")
	if !hasRealm || realm == "" {
		realm = kc.LibDefaults.DefaultRealm
	}
	if realm == "" {
		return g, cfgErr(source, "has a principal without @REALM and krb5.conf has no default_realm", "", "write principal=\"name@REALM\"")
	}
	g.AuthType = sarama.KRB5_KEYTAB_AUTH
	g.KeyTabPath = kt
	g.KerberosConfigPath = krb5conf
	g.Username = user
	g.Realm = realm
	// The JDK's Kerberos does not use FAST; neither should we, or KDCs
	// without FAST support (Active Directory defaults) fail.
	g.DisablePAFXFAST = true
	return g, nil
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
