package settings

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/connect-init/connect-init/restclient"
)

// The REST credentials' settings. Each also has a _FILE form naming a file
// to read the value from, which is how Docker and Swarm secrets are mounted
// (/run/secrets/<name>) and how Kubernetes mounts a Secret as a volume.
const (
	RESTUsername = "CONNECT_INIT_REST_USERNAME"
	RESTPassword = "CONNECT_INIT_REST_PASSWORD"
	RESTToken    = "CONNECT_INIT_REST_TOKEN"
	fileSuffix   = "_FILE"
)

// maxSecretFile bounds a credential file: a secret is a few hundred bytes,
// and a path pointing at something else (a log, a device) must fail rather
// than be sent as a header.
const maxSecretFile = 64 << 10

// RESTAuth is the one set of credentials every call to a worker's REST
// API carries, from the values or files given. When any is a file, the
// files are read again for every request (Auth.Reload), so that a rotated
// secret is picked up by clients that live long (the watcher's, the
// workers finder's), and a file that can no longer be read fails the
// request with an error naming its variable, rather than sending none.
// Validate has reported every problem with them at start, and a value it
// refused is left empty here.
func (s Settings) RESTAuth() restclient.Auth {
	a, _ := s.resolveRESTAuth()
	if s.RESTUsernameFile != "" || s.RESTPasswordFile != "" || s.RESTTokenFile != "" {
		a.Reload = func() (restclient.Auth, error) {
			n, errs := s.resolveRESTAuth()
			if len(errs) > 0 {
				return restclient.Auth{}, errors.Join(errs...)
			}
			return n, nil
		}
	}
	return a
}

// resolveRESTAuth reads the credentials and returns every problem, each
// naming its variable (or flag) and never the secret: a value given both
// directly and as a file, a file that cannot be read or is empty, a user
// without a password or the other way round, a token next to a user.
func (s Settings) resolveRESTAuth() (restclient.Auth, []error) {
	var errs []error
	value := func(name, direct, file string) string {
		switch {
		case direct != "" && file != "":
			errs = append(errs, &ConfigError{Setting: s.Name(name + fileSuffix), Problem: "is set together with " + s.Name(name),
				Fix: "set only one of them (the _FILE form for a mounted secret)"})
			return ""
		case file == "":
			if problem := badCredential(name, direct); problem != "" {
				errs = append(errs, &ConfigError{Setting: s.Name(name), Problem: problem, Fix: "set it to the credential alone, on one line"})
				return ""
			}
			return direct
		}
		v, err := readSecretFile(file)
		if err != nil {
			errs = append(errs, &ConfigError{Setting: s.Name(name + fileSuffix), Problem: err.Error(),
				Fix: "point it at a readable file holding the value (a Docker or Swarm secret is mounted under /run/secrets/)"})
			return ""
		}
		if problem := badCredential(name, v); problem != "" {
			errs = append(errs, &ConfigError{Setting: s.Name(name + fileSuffix), Problem: "names " + file + ", which " + strings.TrimPrefix(problem, "value "),
				Fix: "write the credential alone into the file, on one line (one trailing line end is fine)"})
			return ""
		}
		return v
	}
	a := restclient.Auth{
		Username: value(RESTUsername, s.RESTUsername, s.RESTUsernameFile),
		Password: value(RESTPassword, s.RESTPassword, s.RESTPasswordFile),
		Token:    value(RESTToken, s.RESTToken, s.RESTTokenFile),
	}
	switch {
	case a.Token != "" && (a.Username != "" || a.Password != ""):
		errs = append(errs, &ConfigError{Setting: RESTToken, Problem: "is set together with " + RESTUsername + "/" + RESTPassword,
			Fix: "use either HTTP basic credentials or a bearer token"})
	case a.Username != "" && a.Password == "" && s.RESTPasswordFile == "":
		errs = append(errs, &ConfigError{Setting: RESTPassword, Problem: "is not set, but " + s.Name(RESTUsername) + " is",
			Fix: "set " + RESTPassword + " or " + RESTPassword + fileSuffix})
	case a.Password != "" && a.Username == "" && s.RESTUsernameFile == "":
		errs = append(errs, &ConfigError{Setting: RESTUsername, Problem: "is not set, but a password is",
			Fix: "set " + RESTUsername + " (or " + RESTUsername + fileSuffix + ")"})
	}
	if len(errs) > 0 {
		return restclient.Auth{}, errs
	}
	return a, nil
}

// readSecretFile reads one credential from path. One trailing line end is
// dropped (echo and most editors add it; `docker secret create` keeps it);
// anything else is kept as it is. The error names the path, never the
// content.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("names %s, which cannot be read: %w", path, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("names %s, which is a directory", path)
	}
	buf, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("names %s, which cannot be read: %w", path, unwrapPath(err))
	}
	if len(buf) > maxSecretFile {
		return "", fmt.Errorf("names %s, which is larger than %d KiB: not a credential", path, maxSecretFile>>10)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("names %s, which is empty", path)
	}
	return v, nil
}

// badCredential says what makes v unfit to send as name ("" when it is
// fit), without showing v. Leading or trailing white space, a second line
// (a blank line included) and control characters are mistakes of the file
// or the variable, never part of a credential: a token with them cannot
// even be carried by an HTTP header (net/http refuses it at the first
// request, long after the settings step), and a password with them is
// refused by the worker as a wrong one. A user name cannot hold ':', which
// HTTP basic authentication uses as its separator.
func badCredential(name, v string) string {
	if v == "" {
		return ""
	}
	if strings.TrimSpace(v) != v {
		return "value begins or ends with white space (or a blank line)"
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\n' || c == '\r':
			return "value holds more than one line"
		case c < 0x20 || c == 0x7f:
			return fmt.Sprintf("value holds a control character (byte %d), which an HTTP header cannot carry", i+1)
		}
	}
	if name == RESTUsername && strings.Contains(v, ":") {
		return "value holds ':', which HTTP basic authentication cannot carry in a user name"
	}
	return ""
}

// unwrapPath drops the *PathError's own copy of the path (already named).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
