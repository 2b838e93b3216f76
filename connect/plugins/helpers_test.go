package plugins

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Service interface names the tests use.
const (
	svcSource    = "org.apache.kafka.connect.source.SourceConnector"
	svcSink      = "org.apache.kafka.connect.sink.SinkConnector"
	svcConverter = "org.apache.kafka.connect.storage.Converter"
	svcHeader    = "org.apache.kafka.connect.storage.HeaderConverter"
	svcTransform = "org.apache.kafka.connect.transforms.Transformation"
	svcPredicate = "org.apache.kafka.connect.transforms.predicates.Predicate"
	svcProvider  = "org.apache.kafka.common.config.provider.ConfigProvider"
)

// cls describes a class file to generate: its name, superclass,
// interfaces and access flags (public concrete by default).
type cls struct {
	name   string
	super  string
	ifaces []string
	access uint16
	pad    int // extra constants and trailing bytes, for the benchmark's realistic sizes
}

// pub is a public concrete class.
func pub(name, super string, ifaces ...string) cls {
	return cls{name: name, super: super, ifaces: ifaces, access: accPublic}
}

// classBytes writes a minimal valid class file (JVMS §4.1): a constant
// pool with the names, plus a few other constants (a Long's two slots, a
// MethodHandle, a String) so the reader's skipping is exercised; no
// fields, methods or attributes.
func classBytes(c cls) []byte {
	var pool bytes.Buffer
	n := 1
	utf8 := func(s string) int {
		pool.WriteByte(1)
		binary.Write(&pool, binary.BigEndian, uint16(len(s)))
		pool.WriteString(s)
		n++
		return n - 1
	}
	class := func(name string) int {
		u := utf8(strings.ReplaceAll(name, ".", "/"))
		pool.WriteByte(7)
		binary.Write(&pool, binary.BigEndian, uint16(u))
		n++
		return n - 1
	}
	pool.Write([]byte{5, 0, 0, 0, 0, 0, 0, 0, 42}) // Long: two slots
	n += 2
	for i := range c.pad {
		utf8(fmt.Sprintf("method%dOf%s(Ljava/lang/String;I)V", i, c.name))
	}
	this := class(c.name)
	super := 0
	if c.super != "" {
		super = class(c.super)
	}
	var ifs []int
	for _, i := range c.ifaces {
		ifs = append(ifs, class(i))
	}
	s := utf8("a string")
	pool.Write([]byte{8, byte(s >> 8), byte(s)}) // String
	pool.Write([]byte{15, 5, 0, 1})              // MethodHandle (kind, ref)
	n += 2
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(0xCAFEBABE))
	binary.Write(&b, binary.BigEndian, []uint16{0, 61, uint16(n)})
	b.Write(pool.Bytes())
	binary.Write(&b, binary.BigEndian, []uint16{c.access, uint16(this), uint16(super), uint16(len(ifs))})
	for _, i := range ifs {
		binary.Write(&b, binary.BigEndian, uint16(i))
	}
	binary.Write(&b, binary.BigEndian, []uint16{0, 0, 0}) // fields, methods, attributes
	for i := range c.pad {                                // stands for the code the header reader never inflates
		fmt.Fprintf(&b, "%x:%s;", i*7919, c.name)
	}
	return b.Bytes()
}

// jar describes a jar to generate.
type jar struct {
	classes  []cls
	services map[string][]string // service interface -> listed classes
	version  string              // MANIFEST.MF Implementation-Version
	extra    map[string]string   // more entries
}

// writeJar writes j at path (creating directories), deflated as real jars
// are.
func writeJar(t testing.TB, path string, j jar) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	put := func(name string, data []byte) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	mf := "Manifest-Version: 1.0\r\n"
	if j.version != "" {
		mf += "Implementation-Title: test\r\nImplementation-Version: " + j.version + "\r\n"
	}
	put(manifestEntry, []byte(mf+"\r\n"))
	for svc, classes := range j.services {
		put(servicesDir+svc, []byte("# a comment\n"+strings.Join(classes, "\n")+"  # trailing\n\n"))
	}
	for _, c := range j.classes {
		put(strings.ReplaceAll(c.name, ".", "/")+".class", classBytes(c))
	}
	for name, data := range j.extra {
		put(name, []byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeClassDir writes classes as a class hierarchy under dir, with
// manifests under dir/META-INF/services.
func writeClassDir(t testing.TB, dir string, classes []cls, services map[string][]string) {
	t.Helper()
	for _, c := range classes {
		p := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(c.name, ".", "/")+".class"))
		writeFile(t, p, classBytes(c))
	}
	for svc, list := range services {
		writeFile(t, filepath.Join(dir, "META-INF", "services", svc), []byte(strings.Join(list, "\n")+"\n"))
	}
}

// writeFile writes data at p, creating directories.
func writeFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kafkaAPIJar is a stand-in for Kafka's jars on the classpath:
// kafka-clients' version resource and the plugin base types as classes
// (the scan stops at their names), plus a classpath converter with a
// manifest.
func kafkaAPIJar(t testing.TB, path, version string) {
	writeJar(t, path, jar{
		classes: []cls{
			{name: svcSource, super: "org.apache.kafka.connect.connector.Connector", access: accPublic | accAbstract},
			{name: svcTransform, super: "java.lang.Object", access: accPublic | accInterface | accAbstract},
			pub("org.apache.kafka.connect.storage.StringConverter", "java.lang.Object", svcConverter, svcHeader),
		},
		services: map[string][]string{
			svcConverter: {"org.apache.kafka.connect.storage.StringConverter"},
			svcHeader:    {"org.apache.kafka.connect.storage.StringConverter"},
		},
		extra: map[string]string{kafkaVersionRes: "commitId=abc\nversion=" + version + "\n"},
	})
}

// byClass indexes plugins by "class/kind".
func byClass(ps []Plugin) map[string]Plugin {
	m := map[string]Plugin{}
	for _, p := range ps {
		m[p.Class+"/"+string(p.Kind)] = p
	}
	return m
}
