package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/connect-init/connect-init/workerconfig"
)

// Desired states a definition may ask for ("state"); empty leaves the
// connector's state as it is.
const (
	StateRunning = "running"
	StatePaused  = "paused"
	StateStopped = "stopped"
)

// Connector is one connector definition read from a file.
type Connector struct {
	// Name is the connector's name: "name" in the file, else the file name
	// without its extension.
	Name string
	// Config is the configuration as Connect's REST API takes it, with
	// "name" set to Name (Connect stores it so). ${...} references are kept
	// literally.
	Config map[string]string
	// State is "", running, paused or stopped.
	State string
	// File is the file the definition came from.
	File string
	// Lines maps each config key to its line in File (0: unknown).
	Lines map[string]int
	// Offsets, from a JSON definition's "offsets", are set when the
	// connector is created (stopped, the offsets written, then started):
	// where a renamed or moved connector resumes. nil: none.
	Offsets *Offsets
}

// Where names a key's place in the file: "file:line" or just the file.
func (c Connector) Where(key string) string {
	if n := c.Lines[key]; n > 0 {
		return fmt.Sprintf("%s:%d", c.File, n)
	}
	return c.File
}

// FileError is a definition that cannot be used: the command exits 2 and
// writes nothing.
type FileError struct {
	File string
	// Line is 1-based; 0 when the problem is the whole file.
	Line    int
	Problem string
}

// Error names the file and line, then the problem.
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Problem)
}

// FileErrors are every bad file of a directory, in name order: one run
// names them all (each with its line and problem), so that a directory
// with three broken files is fixed in one round, not three. Load returns
// a lone bad file as its *FileError, several as FileErrors; errors.As
// finds the first *FileError in either.
type FileErrors []*FileError

// Error is one file's error per line.
func (e FileErrors) Error() string {
	lines := make([]string, len(e))
	for i, fe := range e {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives the files' errors to errors.As and errors.Is.
func (e FileErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, fe := range e {
		errs[i] = fe
	}
	return errs
}

// EachFileError is every *FileError err holds: the one of a lone bad
// file, each of FileErrors, or err itself as one when it is another error.
func EachFileError(err error) []*FileError {
	var many FileErrors
	var one *FileError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &many):
		return many
	case errors.As(err, &one):
		return []*FileError{one}
	}
	return []*FileError{{Problem: err.Error()}}
}

// Load reads every *.json and *.properties file of dir (not recursing;
// names starting with "." are skipped, as Kubernetes' ConfigMap mounts keep
// their ..data links there), in name order. Every bad file, and every file
// defining a connector an earlier file defines, is reported (a *FileError
// for one, FileErrors for several), and then no connector is returned: a
// directory is used whole or not at all. A directory that cannot be read
// is an error. Other files are returned by name in skipped.
func Load(dir string) (conns []Connector, skipped []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, &FileError{File: dir, Problem: "cannot read the connectors directory: " + pathErr(err)}
	}
	var bad FileErrors
	seen := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if strings.HasPrefix(name, ".") {
			continue
		}
		ext := strings.ToLower(filepath.Ext(name))
		if ext != ".json" && ext != ".properties" {
			skipped = append(skipped, name)
			continue
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			skipped = append(skipped, name)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			bad = append(bad, &FileError{File: path, Problem: "cannot be read: " + pathErr(err)})
			continue
		}
		base := strings.TrimSuffix(name, filepath.Ext(name))
		var c Connector
		if ext == ".json" {
			c, err = parseJSON(path, base, data)
		} else {
			c, err = parseProperties(path, base, data)
		}
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				fe = &FileError{File: path, Problem: err.Error()}
			}
			bad = append(bad, fe)
			continue
		}
		if other, dup := seen[c.Name]; dup {
			bad = append(bad, &FileError{File: path, Problem: fmt.Sprintf("defines connector %q, which %s defines too: one file per connector", c.Name, other)})
			continue
		}
		seen[c.Name] = path
		conns = append(conns, c)
	}
	switch len(bad) {
	case 0:
	case 1:
		return nil, nil, bad[0]
	default:
		return nil, nil, bad
	}
	sort.Slice(conns, func(i, j int) bool { return conns[i].Name < conns[j].Name })
	return conns, skipped, nil
}

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parseProperties reads a .properties definition with the JDK 17
// java.util.Properties rules (the worker file's reader): every key is a
// config key; "name" names the connector.
func parseProperties(path, base string, data []byte) (Connector, error) {
	props, lines, err := workerconfig.ParseLines(data)
	if err != nil {
		// The reader's errors start with "line N: ".
		fe := &FileError{File: path, Problem: err.Error()}
		var n int
		if _, serr := fmt.Sscanf(err.Error(), "line %d:", &n); serr == nil {
			fe.Line, fe.Problem = n, strings.TrimSpace(strings.SplitN(err.Error(), ":", 2)[1])
		}
		return Connector{}, fe
	}
	c := Connector{Name: base, Config: map[string]string{}, File: path, Lines: lines}
	for k, v := range props {
		c.Config[k] = v
	}
	if n, ok := props["name"]; ok {
		c.Name = n
	}
	return finish(c)
}

// jsonDoc is the wrapped form, as POST /connectors takes it plus "state".
type jsonDoc struct {
	Name   *string         `json:"name"`
	Config json.RawMessage `json:"config"`
	State  *string         `json:"state"`
	// Tasks and Type are what GET /connectors/<name> adds; a saved answer
	// is accepted and they are ignored.
	Tasks json.RawMessage `json:"tasks"`
	Type  json.RawMessage `json:"type"`
	// Offsets are Connect's offsets document or its list (KIP-875).
	Offsets json.RawMessage `json:"offsets"`
}

// parseJSON reads {"name":..., "config":{...}, "state":...} or a bare
// config object.
func parseJSON(path, base string, data []byte) (Connector, error) {
	var top map[string]json.RawMessage
	if err := strictDecode(data, &top); err != nil {
		return Connector{}, jsonErr(path, data, err)
	}
	if top == nil {
		return Connector{}, &FileError{File: path, Problem: "is not a JSON object: write {\"name\": ..., \"config\": {...}} or a bare config object"}
	}
	c := Connector{Name: base, File: path, Lines: map[string]int{}}
	cfgData := data
	if wrappedForm(top) {
		for _, k := range inFileOrder(data, top) {
			switch k {
			case "name", "config", "state", "tasks", "type", "offsets":
			default:
				return Connector{}, &FileError{File: path, Line: keyLine(data, 0, k), Problem: fmt.Sprintf("unknown field %q: a definition has name, config, state (running, paused or stopped) and offsets%s", k, didYouMean(k))}
			}
		}
		if _, ok := top["config"]; !ok {
			return Connector{}, &FileError{File: path, Problem: "\"config\" is missing: a definition is {\"name\": ..., \"config\": {...}} (a bare config holds only strings, numbers and booleans)"}
		}
		var doc jsonDoc
		if err := json.Unmarshal(data, &doc); err != nil {
			return Connector{}, jsonErr(path, data, err)
		}
		if doc.Name != nil {
			c.Name = *doc.Name
		}
		if doc.State != nil {
			c.State = strings.ToLower(strings.TrimSpace(*doc.State))
			switch c.State {
			case StateRunning, StatePaused, StateStopped:
			default:
				return Connector{}, &FileError{File: path, Line: keyLine(data, 0, "state"), Problem: fmt.Sprintf("state %q: use running, paused or stopped (or leave it out to keep the connector's state)", *doc.State)}
			}
		}
		cfgData = doc.Config
		if len(doc.Offsets) > 0 && string(bytes.TrimSpace(doc.Offsets)) != "null" {
			o, err := ParseOffsets(doc.Offsets)
			if err != nil {
				return Connector{}, &FileError{File: path, Line: keyLine(data, 0, "offsets"), Problem: "\"offsets\": " + err.Error()}
			}
			c.Offsets = o
			c.Lines["offsets"] = keyLine(data, 0, "offsets")
		}
	}
	off := int64(bytes.Index(data, cfgData))
	cfg, err := stringMap(cfgData)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.File, fe.Line = path, lineAt(data, off+int64(fe.Line))
			return Connector{}, fe
		}
		return Connector{}, jsonErr(path, data, err)
	}
	c.Config = cfg
	for k := range cfg {
		c.Lines[k] = keyLine(data, off, k)
	}
	if n, ok := cfg["name"]; ok && top["config"] != nil && top["name"] != nil && n != c.Name {
		return Connector{}, &FileError{File: path, Line: c.Lines["name"], Problem: fmt.Sprintf("config.name %q differs from name %q: Connect refuses such a request; remove config.name", n, c.Name)}
	}
	if n, ok := cfg["name"]; ok {
		c.Name = n
	}
	return finish(c)
}

// wrappedForm tells the wrapped form ({"name", "config", "state"}) from a
// bare config. A "config" field makes it wrapped; so does any field whose
// value is an object, which a bare config (strings, numbers, booleans) can
// never hold: "confg": {...} is a typo of the wrapped form, and naming it
// an unknown field says so, where reading it as a bare config would blame
// the value of a config key nobody meant.
func wrappedForm(top map[string]json.RawMessage) bool {
	if _, ok := top["config"]; ok {
		return true
	}
	for _, v := range top {
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
			return true
		}
	}
	return false
}

// inFileOrder is top's keys in the order the file gives them, so that the
// first unknown field reported is the first one a reader meets.
func inFileOrder(data []byte, top map[string]json.RawMessage) []string {
	keys := sortedKeys(top)
	sort.SliceStable(keys, func(i, j int) bool { return keyLine(data, 0, keys[i]) < keyLine(data, 0, keys[j]) })
	return keys
}

// didYouMean suggests the known field a typo is closest to.
func didYouMean(k string) string {
	for _, f := range []string{"config", "name", "state"} {
		if editDistance(strings.ToLower(k), f) <= 2 {
			return fmt.Sprintf("; did you mean %q?", f)
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// stringMap decodes a JSON object of scalars, as Connect's Jackson mapping
// to Map<String,String> takes it: numbers and booleans become their text;
// null, arrays and objects are errors (returned as a *FileError whose Line
// holds the byte offset of the value, for the caller to turn into a line).
func stringMap(data []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := strictDecode(data, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, &FileError{Problem: "config is not a JSON object"}
	}
	out := map[string]string{}
	for k, v := range raw {
		t := bytes.TrimSpace(v)
		at := bytes.Index(data, v)
		switch {
		case len(t) > 0 && t[0] == '"':
			var s string
			if err := json.Unmarshal(t, &s); err != nil {
				return nil, err
			}
			out[k] = s
		case bytes.Equal(t, []byte("true")), bytes.Equal(t, []byte("false")):
			out[k] = string(t)
		case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
			out[k] = string(t)
		default:
			return nil, &FileError{Line: at, Problem: fmt.Sprintf("config key %q: the value must be a string, number or boolean (got %s)", k, shorten(string(t)))}
		}
	}
	return out, nil
}

// strictDecode decodes one JSON value and refuses trailing data and
// duplicate keys at the top level of the value.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return dupKeys(data)
}

// dupKeys reports a key given twice in one object: Jackson keeps the last,
// and a silent overwrite is a typo waiting to be applied.
func dupKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: d == '{', keys: map[string]bool{}, wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.obj {
			if top.wantKey {
				k := tok.(string)
				if top.keys[k] {
					return &dupKeyError{key: k, offset: dec.InputOffset()}
				}
				top.keys[k] = true
				top.wantKey = false
			} else {
				top.wantKey = true
			}
		}
	}
}

type dupKeyError struct {
	key    string
	offset int64
}

func (e *dupKeyError) Error() string {
	return fmt.Sprintf("key %q is given twice (Connect would keep the last one silently)", e.key)
}

// jsonErr turns a decoding error into a FileError with the line.
func jsonErr(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var de *dupKeyError
	switch {
	case errors.As(err, &se):
		return &FileError{File: path, Line: lineAt(data, se.Offset), Problem: "not valid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &FileError{File: path, Line: lineAt(data, te.Offset), Problem: fmt.Sprintf("field %q must be a %s (got a JSON %s)", te.Field, te.Type, te.Value)}
	case errors.As(err, &de):
		return &FileError{File: path, Line: lineAt(data, de.offset), Problem: de.Error()}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return &FileError{File: path, Line: lineAt(data, int64(len(data))), Problem: "not valid JSON: the file ends early"}
	}
	return &FileError{File: path, Problem: "not valid JSON: " + err.Error()}
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off < 0 {
		return 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// keyLine finds the line of "key": from offset off (0 when not found).
func keyLine(data []byte, off int64, key string) int {
	if off < 0 {
		off = 0
	}
	q, _ := json.Marshal(key)
	i := bytes.Index(data[off:], q)
	if i < 0 {
		return 0
	}
	return lineAt(data, off+int64(i))
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// finish checks what Connect needs of every definition and sets "name".
func finish(c Connector) (Connector, error) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return Connector{}, &FileError{File: c.File, Line: c.Lines["name"], Problem: "the connector name is empty: set \"name\" or name the file after the connector"}
	}
	for _, r := range c.Name {
		if unicode.IsControl(r) || r == '/' {
			return Connector{}, &FileError{File: c.File, Line: c.Lines["name"], Problem: fmt.Sprintf("connector name %q contains %q, which Connect's REST paths cannot carry", c.Name, r)}
		}
	}
	if strings.TrimSpace(c.Config["connector.class"]) == "" {
		return Connector{}, &FileError{File: c.File, Line: c.Lines["connector.class"], Problem: "connector.class is missing or empty: every connector names its class (e.g. org.apache.kafka.connect.file.FileStreamSinkConnector)"}
	}
	c.Config["name"] = c.Name
	return c, nil
}
