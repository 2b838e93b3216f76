// Package security turns a worker's security settings (security.protocol,
// ssl.*, sasl.*) into a sarama client configuration, so connect-init reaches
// the brokers exactly as the Connect worker will.
//
// Kafka's Java client is the reference: defaults, precedence and the
// settings it rejects follow DefaultSslEngineFactory, SslConfigs,
// SaslConfigs, JaasConfig and the login callback handlers. A setting the
// worker would reject is rejected here as a *workerconfig.Error (exit 2),
// and a setting connect-init cannot reproduce is rejected rather than
// silently approximated, since a check made with other settings than the
// worker's proves nothing.
//
// No error produced by this package carries a password, a JAAS
// configuration, a client secret, a token or a private key.
package security

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/workerconfig"
)

// Options carries what Configure needs from outside the worker
// properties. The zero value uses the process environment and real clock.
type Options struct {
	// LookupEnv reads the worker's environment; KAFKA_OPTS (and
	// JAVA_TOOL_OPTIONS) supply -Djava.security.krb5.conf and
	// -Djava.security.auth.login.config as the worker JVM sees them.
	// Defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// HTTPClient, when set, is used for the OAuth token endpoint instead of
	// a client built from sasl.login.*.timeout.ms (tests use it).
	HTTPClient *http.Client
	// Now is the clock for unsecured OAUTHBEARER tokens. Defaults to
	// time.Now.
	Now func() time.Time
}

func (o Options) lookupEnv(k string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Configure applies the client security settings in props (already resolved
// for the client's role, e.g. with admin.* overrides folded in) to cfg.
// A *workerconfig.Error is returned for settings that are wrong or not
// supported; callers turn it into exit code 2. cfg is changed only when
// Configure succeeds.
func Configure(cfg *sarama.Config, props workerconfig.Properties) error {
	return ConfigureWithOptions(cfg, props, Options{})
}

// ConfigureWithOptions is Configure with the environment, token HTTP client
// and clock made explicit, for tests and for callers that hold the worker's
// environment in a map rather than in the process.
func ConfigureWithOptions(cfg *sarama.Config, props workerconfig.Properties, opts Options) error {
	proto := props.Get("security.protocol", "PLAINTEXT")
	// Kafka's SecurityProtocol.forName upper-cases the name.
	useTLS, useSASL := false, false
	switch strings.ToUpper(proto) {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return cfgErr("security.protocol", "is not a Kafka security protocol", proto,
			"use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, matching the broker listener")
	}

	// Build on a copy so a failure leaves cfg untouched.
	work := *cfg
	work.Net.TLS.Enable = false
	work.Net.TLS.Config = nil
	work.Net.SASL.Enable = false
	if useTLS {
		tc, err := TLSConfig(props)
		if err != nil {
			return err
		}
		work.Net.TLS.Enable = true
		work.Net.TLS.Config = tc
	}
	if useSASL {
		if err := configureSASL(&work, props, opts); err != nil {
			return err
		}
	}
	cfg.Net.TLS = work.Net.TLS
	cfg.Net.SASL = work.Net.SASL
	return nil
}
