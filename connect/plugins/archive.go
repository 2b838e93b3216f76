package plugins

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// fileIndex is what one URL of a plugin source (a jar, or a class
// directory) holds, read without inflating its classes: the class names
// (from the zip's central directory or the directory tree), the
// ServiceLoader manifests, and the version the jar states.
type fileIndex struct {
	path     string
	dir      bool
	classes  []string            // dotted binary names
	services map[string][]string // service interface -> listed classes
	// implVersion is MANIFEST.MF's Implementation-Version; nameVersion the
	// version in the file name; kafkaVersion kafka-clients'
	// kafka/kafka-version.properties.
	implVersion, nameVersion, kafkaVersion string
}

// Entry names the index reads beyond the class entries.
const (
	servicesDir     = "META-INF/services/"
	manifestEntry   = "META-INF/MANIFEST.MF"
	kafkaVersionRes = "kafka/kafka-version.properties"
)

// indexFile reads one URL: a jar through its central directory, a class
// directory by walking it. The zip stays open when keep is set (the caller
// then reads class headers from it and closes it).
func indexFile(p string, dir, keep bool) (*fileIndex, *zip.ReadCloser, error) {
	fi := &fileIndex{path: p, dir: dir, services: map[string][]string{}}
	if dir {
		return fi, nil, fi.indexDir()
	}
	fi.nameVersion = versionInFileName(filepath.Base(p))
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, nil, fmt.Errorf("open archive: %w", err)
	}
	if err := fi.indexZip(zr); err != nil {
		zr.Close()
		return nil, nil, err
	}
	if !keep {
		zr.Close()
		return fi, nil, nil
	}
	return fi, zr, nil
}

// indexZip lists a jar's classes and reads its small metadata entries.
func (fi *fileIndex) indexZip(zr *zip.ReadCloser) error {
	for _, f := range zr.File {
		name := f.Name
		if cls, ok := classEntryName(name); ok {
			fi.classes = append(fi.classes, cls)
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(name, servicesDir):
			err = fi.readService(strings.TrimPrefix(name, servicesDir), f.Open)
		case name == manifestEntry:
			err = readWith(f.Open, func(r io.Reader) { fi.implVersion = manifestAttr(r, "Implementation-Version") })
		case name == kafkaVersionRes:
			err = readWith(f.Open, func(r io.Reader) { fi.kafkaVersion = propertyValue(r, "version") })
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
	return nil
}

// indexDir lists a class directory's classes and manifests.
func (fi *fileIndex) indexDir() error {
	return filepath.WalkDir(fi.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk class directory: %w", err)
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(fi.path, p)
		if err != nil {
			return fmt.Errorf("walk class directory: %w", err)
		}
		rel = filepath.ToSlash(rel)
		if cls, ok := classEntryName(rel); ok {
			fi.classes = append(fi.classes, cls)
		} else if strings.HasPrefix(rel, servicesDir) {
			open := func() (io.ReadCloser, error) { return os.Open(p) }
			if err := fi.readService(strings.TrimPrefix(rel, servicesDir), open); err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
		}
		return nil
	})
}

// readService reads one META-INF/services file if it is a plugin type's
// (or Connector's, which Connect does not read but which tells a connector
// that lacks the right manifest).
func (fi *fileIndex) readService(service string, open func() (io.ReadCloser, error)) error {
	if _, ok := kindOfService(service); !ok && service != connectorBase {
		return nil
	}
	return readWith(open, func(r io.Reader) { fi.services[service] = serviceClasses(r) })
}

// readWith opens an entry, hands it to read and closes it.
func readWith(open func() (io.ReadCloser, error), read func(io.Reader)) error {
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	read(io.LimitReader(rc, 1<<20))
	return nil
}

// classEntryName turns a jar entry into the binary name of the class a
// class loader would find there. Multi-release variants
// (META-INF/versions/N/...) repeat base classes and are skipped, as are
// module-info and package-info, which are no classes.
func classEntryName(entry string) (string, bool) {
	if !strings.HasSuffix(entry, ".class") || strings.HasPrefix(entry, "META-INF/") {
		return "", false
	}
	base := path.Base(entry)
	if base == "module-info.class" || base == "package-info.class" {
		return "", false
	}
	return strings.ReplaceAll(strings.TrimSuffix(entry, ".class"), "/", "."), true
}

// serviceClasses parses a ServiceLoader provider-configuration file: one
// class name per line, '#' starts a comment, blanks around are ignored.
func serviceClasses(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// manifestAttr returns a main-section attribute of a JAR manifest
// (continuation lines start with one space; the main section ends at the
// first empty line).
func manifestAttr(r io.Reader, name string) string {
	sc := bufio.NewScanner(r)
	var value string
	inAttr := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break
		}
		if strings.HasPrefix(line, " ") {
			if inAttr {
				value += line[1:]
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		inAttr = strings.EqualFold(strings.TrimSpace(k), name)
		if inAttr {
			value = strings.TrimSpace(v)
		}
		if !inAttr && value != "" {
			break
		}
	}
	return strings.TrimSpace(value)
}

// propertyValue returns one key of a simple Java properties file
// (key=value lines; enough for kafka-version.properties).
func propertyValue(r io.Reader, key string) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// versionInFileName finds a Maven-style version in a jar's name:
// "debezium-connector-postgres-2.7.3.Final.jar" gives "2.7.3.Final",
// "kafka-connect-jdbc-10.7.4.jar" "10.7.4"; the version starts at the
// first '-' followed by a digit.
func versionInFileName(name string) string {
	if !isArchive(name) {
		return ""
	}
	stem := name[:len(name)-len(".jar")]
	for i := 0; i+1 < len(stem); i++ {
		if stem[i] == '-' && stem[i+1] >= '0' && stem[i+1] <= '9' {
			return stem[i+1:]
		}
	}
	return ""
}
