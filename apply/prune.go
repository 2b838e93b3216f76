package apply

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Suspect is a file of the connectors directory that Load skipped but that
// looks like a connector definition in another form: a ConfigMap written
// as YAML, a JSON file saved as .txt. It is named in a warning, since a
// directory of such files defines nothing and, pruned, deletes everything.
type Suspect struct {
	Name string
	Why  string
}

// suspectPeek is how much of a skipped file is read to judge it.
const suspectPeek = 64 << 10

// Suspects are the skipped files (Load's second result, in dir) that look
// like definitions: *.yaml and *.yml, and any other regular file that holds
// a JSON object or names a connector.class.
func Suspects(dir string, skipped []string) []Suspect {
	var out []Suspect
	for _, name := range skipped {
		path := filepath.Join(dir, name)
		switch strings.ToLower(filepath.Ext(name)) {
		case ".yaml", ".yml":
			out = append(out, Suspect{Name: name, Why: "YAML is not read: write the definition as *.json or *.properties"})
			continue
		}
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		head, _ := io.ReadAll(io.LimitReader(f, suspectPeek))
		f.Close()
		t := bytes.TrimSpace(head)
		switch {
		case len(t) > 0 && t[0] == '{':
			out = append(out, Suspect{Name: name, Why: "holds JSON but is not named *.json: rename it to be read"})
		case bytes.Contains(t, []byte("connector.class")):
			out = append(out, Suspect{Name: name, Why: "names a connector.class but is not *.json or *.properties: rename it to be read"})
		}
	}
	return out
}

// PruneError is a prune refused because its directory defines no
// connector: pruning it would delete every connector of the cluster, the
// usual outcome of a mount at the wrong place or a ConfigMap written as
// YAML rather than of a wish. The command exits 2 and writes nothing.
type PruneError struct {
	Dir      string
	Suspects []Suspect
}

// Error says what was refused, why, and what to do.
func (e *PruneError) Error() string {
	msg := fmt.Sprintf("--prune with %s, which defines no connector (*.json, *.properties), would delete every connector of the cluster: refused, nothing was written", e.Dir)
	if len(e.Suspects) > 0 {
		var names []string
		for _, s := range e.Suspects {
			names = append(names, s.Name)
		}
		msg += fmt.Sprintf(" (%s look like definitions in another form)", strings.Join(names, ", "))
	}
	return msg
}

// Fix is what to do about it.
func (e *PruneError) Fix() string {
	return "put the definitions in the directory (check the mount or the ConfigMap), or give --allow-empty-prune to delete every connector on purpose"
}

// CheckPrune refuses a prune of a directory that defines no connector,
// unless allowEmpty (--allow-empty-prune) says it is meant.
func CheckPrune(dir string, conns []Connector, suspects []Suspect, prune, allowEmpty bool) error {
	if !prune || allowEmpty || len(conns) > 0 {
		return nil
	}
	return &PruneError{Dir: dir, Suspects: suspects}
}
