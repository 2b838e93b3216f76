package workerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Config-provider class names, as declared in apache/kafka
// clients/src/main/java/org/apache/kafka/common/config/provider/.
const (
	FileConfigProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	DirectoryConfigProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	EnvVarConfigProviderClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

// providerRef is ConfigTransformer.DEFAULT_PATTERN, verbatim. Go's regexp
// picks the same submatches a backtracking engine (Java's) would, so
// "${a:b:c:d}" is provider a, path b, key "c:d" in both.
var providerRef = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// WorkerEnviron returns the environment the worker process will have after
// connect-init execs Confluent's run script: environ without connect-init's
// CONNECT_INIT_* variables, plus the variables apply-mesos-overrides exports
// (CONNECT_REST_ADVERTISED_HOST_NAME=$HOST and CONNECT_REST_ADVERTISED_PORT=$PORT0
// when unset or empty and HOST/PORT0 are set; CONNECT_REST_PORT=8083 when
// unset or empty). EnvVarConfigProvider resolves ${env:...} against this.
func WorkerEnviron(environ []string) []string {
	out := WithoutOwn(environ)
	set := func(name, val string) {
		if cur, _ := LookupEnv(out, name); cur == "" && val != "" {
			out = append(out, name+"="+val)
		}
	}
	host, _ := LookupEnv(out, "HOST")
	port0, _ := LookupEnv(out, "PORT0")
	set("CONNECT_REST_ADVERTISED_HOST_NAME", host)
	set("CONNECT_REST_ADVERTISED_PORT", port0)
	set("CONNECT_REST_PORT", "8083")
	return out
}

// provider is one configured config provider.
type provider struct {
	name, class string
	allowed     []string       // FileConfigProvider/DirectoryConfigProvider allowed.paths; nil = all
	allowlist   *regexp.Regexp // EnvVarConfigProvider allowlist.pattern
}

// ResolveProviders replaces ${provider:[path:]key} references in p the way
// Connect's worker does (AbstractConfig.resolveConfigVariables with
// ConfigTransformer): providers come from config.providers (split on ","
// without trimming, as Java does) and config.providers.<name>.class, with
// parameters under config.providers.<name>.param.; each reference is replaced
// once (results are not expanded again); properties without references are
// returned unchanged. ${env:...} is looked up in environ, which should be
// WorkerEnviron's result (the last occurrence of a name wins, as in Java).
//
// Supported: FileConfigProvider (${file:/path/file.properties:key}, the file
// read as UTF-8 .properties, allowed.paths honoured), DirectoryConfigProvider
// (${directory:/dir:filename}, the whole file content including any trailing
// newline, regular files only, allowed.paths honoured) and
// EnvVarConfigProvider (${env:NAME}, allowlist.pattern honoured, a path is an
// error as in Connect).
//
// connect-init is stricter than Connect, so that a typo cannot silently hand
// a literal "${...}" to Kafka as a password: where Connect leaves a reference
// unresolved (provider not listed in config.providers or without a class,
// missing key, missing or disallowed file, not a directory, variable not
// allowed), this returns a *Error naming the property. A provider with a
// class connect-init does not implement is an error only for properties that
// reference it. Errors never contain resolved values; for a sensitive
// property they contain no part of the value at all, not even the
// reference (it could be part of a literal secret).
func ResolveProviders(p Properties, environ []string) (Properties, error) {
	providers, err := configureProviders(p)
	if err != nil {
		return nil, err
	}
	out := make(Properties, len(p))
	for _, key := range p.Keys() { // sorted: the first error is deterministic
		v := p[key]
		matches := providerRef.FindAllStringSubmatchIndex(v, -1)
		if len(matches) == 0 {
			out[key] = v
			continue
		}
		var b strings.Builder
		last := 0
		for i, m := range matches {
			name := v[m[2]:m[3]]
			path := ""
			if m[6] >= 0 {
				path = v[m[6]:m[7]]
			}
			variable := v[m[8]:m[9]]
			val, err := lookup(providers, name, path, variable, environ)
			if err != nil {
				return nil, refError(key, i+1, len(matches), providers[name] != nil, err)
			}
			b.WriteString(v[last:m[0]])
			b.WriteString(val)
			last = m[1]
		}
		b.WriteString(v[last:])
		out[key] = b.String()
	}
	return out, nil
}

// refError builds the *Error for a reference that cannot be resolved. For
// a sensitive property no part of the value is shown, not the provider,
// path or key of the reference either: a password may merely contain text
// that looks like a reference, and then those parts are the password.
func refError(key string, n, of int, declared bool, err error) *Error {
	which := "has a config-provider reference that cannot be resolved"
	if of > 1 {
		which = fmt.Sprintf("has config-provider references; #%d of %d cannot be resolved", n, of)
	}
	e := &Error{Property: key, Problem: which, Err: err}
	if IsSensitive(key) {
		e.Err = errors.New(redactedReason(err) + " (the value is not shown: the property is secret)")
	}
	if !declared {
		e.Fix = "list the provider in config.providers and set config.providers.<name>.class, or escape the text"
	}
	return e
}

// refFailure is why one reference cannot be resolved, said twice: in full
// (provider, path and key named; it wraps the file system's cause), and
// redacted, with no part of the reference, for a sensitive property (see
// refError).
type refFailure struct {
	full     error
	redacted string
}

func (f *refFailure) Error() string { return f.full.Error() }
func (f *refFailure) Unwrap() error { return f.full }

// refFail is a refFailure whose full text is fmt.Errorf(format, args...);
// the redacted text must not be built from any part of the reference.
func refFail(redacted, format string, args ...any) error {
	return &refFailure{full: fmt.Errorf(format, args...), redacted: redacted}
}

// redactedReason is the value-free text of err; an error that has none
// says only that the reference cannot be resolved.
func redactedReason(err error) string {
	var f *refFailure
	if errors.As(err, &f) {
		return f.redacted
	}
	return "the provider cannot resolve it"
}

// configureProviders is AbstractConfig.instantiateConfigProviders plus each
// provider's configure(): it fails where the worker would fail at startup
// (bad allowed.paths, bad allowlist.pattern).
func configureProviders(p Properties) (map[string]*provider, error) {
	list := p["config.providers"]
	out := map[string]*provider{}
	if list == "" {
		return out, nil
	}
	for _, name := range javaSplitComma(list) {
		class, ok := p["config.providers."+name+".class"]
		if !ok {
			continue // Connect skips a listed provider without a class
		}
		pr := &provider{name: name, class: class}
		param := "config.providers." + name + ".param."
		switch class {
		case FileConfigProviderClass, DirectoryConfigProviderClass:
			if v, ok := p[param+"allowed.paths"]; ok && v != "" {
				for _, a := range javaSplitComma(v) {
					clean := javaNormalize(a)
					if !filepath.IsAbs(clean) {
						return nil, &Error{Property: param + "allowed.paths", Problem: "lists a path that is not absolute", Value: a}
					}
					if _, err := os.Stat(clean); err != nil {
						return nil, &Error{Property: param + "allowed.paths", Problem: "lists a path that does not exist", Value: a, Err: err}
					}
					pr.allowed = append(pr.allowed, clean)
				}
			}
		case EnvVarConfigProviderClass:
			if v, ok := p[param+"allowlist.pattern"]; ok {
				re, err := regexp.Compile(`^(?:` + v + `)$`)
				if err != nil {
					return nil, &Error{Property: param + "allowlist.pattern", Problem: "is not a regular expression connect-init can evaluate (Java's Pattern.matches semantics, RE2 syntax)", Value: v, Err: err}
				}
				pr.allowlist = re
			}
		}
		out[name] = pr
	}
	return out, nil
}

// lookup resolves one reference. Its errors are refFailures, so that a
// sensitive property's error can leave out every part of the reference.
func lookup(providers map[string]*provider, name, path, key string, environ []string) (string, error) {
	pr := providers[name]
	if pr == nil {
		declared := make([]string, 0, len(providers))
		for n := range providers {
			declared = append(declared, strconv.Quote(n))
		}
		sort.Strings(declared)
		return "", refFail("it names a provider that config.providers does not declare",
			"it names provider %q, which config.providers does not declare with a config.providers.%s.class (declared: [%s]; names are not trimmed)", name, name, strings.Join(declared, " "))
	}
	switch pr.class {
	case FileConfigProviderClass:
		return pr.file(path, key)
	case DirectoryConfigProviderClass:
		return pr.directory(path, key)
	case EnvVarConfigProviderClass:
		return pr.env(path, key, environ)
	default:
		return "", refFail("its provider's class is one connect-init cannot evaluate (it supports FileConfigProvider, DirectoryConfigProvider and EnvVarConfigProvider)",
			"provider %q has class %s, which connect-init cannot evaluate (it supports FileConfigProvider, DirectoryConfigProvider and EnvVarConfigProvider)", pr.name, pr.class)
	}
}

// file is FileConfigProvider: key of the UTF-8 .properties file at path.
func (pr *provider) file(path, key string) (string, error) {
	name := pr.name
	if path == "" {
		return "", refFail("its provider (FileConfigProvider) needs a reference of the form ${provider:/path/to/file.properties:key}",
			"provider %q (FileConfigProvider) needs ${%s:/path/to/file.properties:key}", name, name)
	}
	file, err := pr.allowedPath(path)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", refFail("the properties file it names cannot be read: "+cause(err).Error(),
			"provider %q cannot read properties file %s: %w", name, path, cause(err))
	}
	fp, err := parseUTF8(data)
	if err != nil {
		return "", refFail("the properties file it names cannot be read: "+err.Error(),
			"provider %q cannot read properties file %s: %w", name, path, err)
	}
	v, ok := fp[key]
	if !ok {
		return "", refFail("the properties file it names has no such key",
			"provider %q: properties file %s has no key %q", name, path, key)
	}
	return v, nil
}

// directory is DirectoryConfigProvider: the whole of the regular file key
// directly in the directory path.
func (pr *provider) directory(path, key string) (string, error) {
	name := pr.name
	if path == "" {
		return "", refFail("its provider (DirectoryConfigProvider) needs a reference of the form ${provider:/directory:filename}",
			"provider %q (DirectoryConfigProvider) needs ${%s:/directory:filename}", name, name)
	}
	dir, err := pr.allowedPath(path)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", refFail("the directory it names is not a directory", "provider %q: %s is not a directory", name, path)
	}
	if strings.ContainsRune(key, '/') || key == "." || key == ".." || key == "" {
		return "", refFail("the file it names is not a file name (DirectoryConfigProvider only reads files directly in the directory)",
			"provider %q: %q is not a file name (DirectoryConfigProvider only reads files directly in %s)", name, key, path)
	}
	file := filepath.Join(dir, key)
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return "", refFail("the directory it names has no such regular file", "provider %q: directory %s has no regular file %q", name, path, key)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", refFail("the file it names cannot be read: "+cause(err).Error(), "provider %q cannot read %s: %w", name, file, cause(err))
	}
	return decodeUTF8Replacing(data), nil
}

// env is EnvVarConfigProvider: the variable key of the worker's
// environment, if the allowlist lets it through.
func (pr *provider) env(path, key string, environ []string) (string, error) {
	name := pr.name
	if path != "" {
		return "", refFail("its provider (EnvVarConfigProvider) takes no path: write ${provider:VARIABLE}",
			"provider %q (EnvVarConfigProvider) takes no path; write ${%s:VARIABLE}", name, name)
	}
	if pr.allowlist != nil && !pr.allowlist.MatchString(key) {
		return "", refFail("the environment variable it names does not match its provider's allowlist.pattern",
			"provider %q: environment variable %q does not match config.providers.%s.param.allowlist.pattern", name, key, name)
	}
	v, ok := LookupEnv(environ, key)
	if !ok {
		return "", refFail("the environment variable it names is not set in the worker's environment",
			"provider %q: environment variable %q is not set in the worker's environment", name, key)
	}
	return v, nil
}

// allowedPath is AllowedPaths.parseUntrustedPath: with allowed.paths set,
// the normalised path must lie under one of them (component-wise).
func (pr *provider) allowedPath(path string) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", refFail("the path it names contains a NUL character", "provider %q: path %q contains a NUL character", pr.name, path)
	}
	if pr.allowed == nil {
		return path, nil
	}
	clean := javaNormalize(path)
	for _, a := range pr.allowed {
		if clean == a || a == "/" && strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, a+"/") {
			return clean, nil
		}
	}
	return "", refFail("the path it names is outside its provider's allowed.paths",
		"provider %q: path %s is outside config.providers.%s.param.allowed.paths", pr.name, path, pr.name)
}

// javaNormalize is java.nio.file.Path.normalize on Unix: lexical, like
// filepath.Clean, except that an empty path stays empty.
func javaNormalize(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// javaSplitComma is String.split(","): no trimming, trailing empty strings
// removed.
func javaSplitComma(s string) []string {
	parts := strings.Split(s, ",")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// decodeUTF8Replacing is new String(bytes, UTF_8): each invalid byte becomes
// U+FFFD (Java may fold some malformed sequences into one U+FFFD; only
// invalid input differs).
func decodeUTF8Replacing(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[w:]
	}
	return sb.String()
}

// cause is the part of a file-system error after the path, which the
// caller prints itself.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
