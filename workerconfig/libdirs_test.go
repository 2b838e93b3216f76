package workerconfig

import (
	"slices"
	"testing"
)

func TestLibraryDirs(t *testing.T) {
	if got := LibraryDirs(Apache); !slices.Equal(got, []string{"/opt/kafka/libs"}) {
		t.Errorf("apache: %v", got)
	}
	if got := LibraryDirs(Debezium); !slices.Equal(got, []string{"/kafka/libs"}) {
		t.Errorf("debezium: %v", got)
	}
	for _, f := range []Flavour{ConfluentDub, ConfluentUB} {
		if got := LibraryDirs(f); !slices.Contains(got, "/usr/share/java/kafka") || !slices.Contains(got, "/usr/share/java/kafka-serde-tools") {
			t.Errorf("%s: %v", f, got)
		}
	}
	// An unknown image gets every known directory; the caller keeps those
	// that exist.
	if got := LibraryDirs(PropertiesFile); len(got) != len(confluentLibs)+2 {
		t.Errorf("properties: %v", got)
	}
	LibraryDirs(Apache)[0] = "changed"
	if LibraryDirs(Apache)[0] != "/opt/kafka/libs" {
		t.Error("LibraryDirs returned the table itself")
	}
}
