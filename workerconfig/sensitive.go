package workerconfig

import "strings"

// passwordTypeSuffixes are Kafka configs of ConfigDef.Type.PASSWORD (clients'
// SslConfigs, SaslConfigs, BrokerSecurityConfigs) and the Confluent Schema
// Registry client secrets that converters take. They match with any prefix,
// because Connect passes them on under admin., producer., consumer.,
// listeners.https., key.converter. and similar prefixes.
var passwordTypeSuffixes = []string{
	"ssl.key.password",
	"ssl.keystore.password",
	"ssl.truststore.password",
	"ssl.keystore.key",
	"ssl.keystore.certificate.chain",
	"ssl.truststore.certificates",
	"sasl.jaas.config",
	"sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.assertion.private.key.passphrase",
	"basic.auth.user.info",
	"bearer.auth.token",
	"bearer.auth.client.secret",
}

// sensitiveWords mark a value as secret wherever they appear in the name.
var sensitiveWords = []string{
	"password", "passwd", "passphrase", "secret", "jaas", "credential",
	"private.key", "privatekey", "api.key", "apikey", "user.info",
}

// IsSensitive reports whether a property's value must never be printed. It
// is connect-init's one list of secret names: worker settings (config,
// logs, errors, doctor) and connector configs (apply) are redacted by it
// alike:
// every config Kafka declares as PASSWORD type (passwords, sasl.jaas.config,
// ssl.keystore.key and the inline PEM stores), whatever prefix it carries,
// plus anything whose name speaks of a password, secret, credential, private
// or API key, or token, and any name ending in ".key". Erring towards hiding is deliberate; the only names
// spared are token endpoints and token timing settings ("...token.endpoint.url",
// "...token...ms"), which operators need to see to debug OAUTHBEARER.
func IsSensitive(key string) bool {
	k := strings.ToLower(key)
	for _, s := range passwordTypeSuffixes {
		if k == s || strings.HasSuffix(k, "."+s) {
			return true
		}
	}
	for _, s := range sensitiveWords {
		if strings.Contains(k, s) {
			return true
		}
	}
	if k == "key" || strings.HasSuffix(k, ".key") {
		return true
	}
	if strings.Contains(k, "token") {
		for _, harmless := range []string{".url", ".uri", ".ms", ".seconds", ".factor", ".jitter", ".buffer"} {
			if strings.HasSuffix(k, harmless) {
				return false
			}
		}
		return true
	}
	return false
}
