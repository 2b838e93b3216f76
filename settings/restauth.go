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
// API carries, from the values or files given. The files are read on each
// call (a rotated secret is picked up); Validate has reported every
// problem with them, and a value it refused is left empty here.
func (s Settings) RESTAuth() restclient.Auth {
	a, _ := s.resolveRESTAuth()
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
			return direct
		}
		v, err := readSecretFile(file)
		if err != nil {
			errs = append(errs, &ConfigError{Setting: s.Name(name + fileSuffix), Problem: err.Error(),
				Fix: "point it at a readable file holding the value (a Docker or Swarm secret is mounted under /run/secrets/)"})
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

// unwrapPath drops the *PathError's own copy of the path (already named).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
