package security

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []JAASEntry
	}{
		{
			name: "typical PLAIN",
			in:   `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
			want: []JAASEntry{{LoginModule: "org.apache.kafka.common.security.plain.PlainLoginModule", Flag: "REQUIRED",
				Options: map[string]string{"username": "alice", "password": "alice-secret"}}},
		},
		{
			name: "bare values, spaces around =, flag case, newlines",
			in:   "org.apache.kafka.common.security.scram.ScramLoginModule Required\n  username = bob\n  password=pw;",
			want: []JAASEntry{{LoginModule: "org.apache.kafka.common.security.scram.ScramLoginModule", Flag: "REQUIRED",
				Options: map[string]string{"username": "bob", "password": "pw"}}},
		},
		{
			name: "escapes and single quotes",
			in:   `M optional a="x\"y\\z\n" b='it\'s' c="\101\7\08" d="semi;colon=eq";`,
			want: []JAASEntry{{LoginModule: "M", Flag: "OPTIONAL",
				Options: map[string]string{"a": "x\"y\\z\n", "b": "it's", "c": "A\a\x008", "d": "semi;colon=eq"}}},
		},
		{
			name: "comments",
			in:   "/* lead */ M required // to end of line\n a=\"1\" /* mid */ b=\"2\";",
			want: []JAASEntry{{LoginModule: "M", Flag: "REQUIRED", Options: map[string]string{"a": "1", "b": "2"}}},
		},
		{
			name: "two entries",
			in:   `A sufficient x="1"; B requisite;`,
			want: []JAASEntry{
				{LoginModule: "A", Flag: "SUFFICIENT", Options: map[string]string{"x": "1"}},
				{LoginModule: "B", Flag: "REQUISITE", Options: map[string]string{}},
			},
		},
		{
			name: "quoted value ends at end of line like StreamTokenizer",
			in:   "M required a=\"open\n;",
			want: []JAASEntry{{LoginModule: "M", Flag: "REQUIRED", Options: map[string]string{"a": "open"}}},
		},
		{
			name: "unicode word",
			in:   `M required user=jösé password="p€ss";`,
			want: []JAASEntry{{LoginModule: "M", Flag: "REQUIRED", Options: map[string]string{"user": "jösé", "password": "p€ss"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJAAS(tc.in)
			if err != nil {
				t.Fatalf("ParseJAAS: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v %v\nwant %v", got, got[0].Options, tc.want[0].Options)
			}
		})
	}
}

func TestParseJAASErrorsHideValues(t *testing.T) {
	const secret = "S3cr3t-jaas-7f1d"
	tests := []struct{ in, wantMsg string }{
		{``, "login module not specified"},
		{`M`, "control flag not specified"},
		{`M required username="u" password="` + secret + `"`, "not terminated by semi-colon"},
		{`M ` + secret + ` username="u";`, "invalid login module control flag"},
		{`M required password`, "value not specified for key 'password'"},
		{`M required password=;`, "value not specified for key 'password'"},
		{`M required ` + secret + `;`, "value not specified"},
		{`M required a="` + secret + `" = ;`, "expected an option name"},
	}
	for _, tc := range tests {
		_, err := ParseJAAS(tc.in)
		if err == nil {
			t.Errorf("%q: no error", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantMsg) {
			t.Errorf("%q: error %q does not contain %q", tc.in, err, tc.wantMsg)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: error leaks the secret: %q", tc.in, err)
		}
	}
}

func TestJAASEntryStringRedacts(t *testing.T) {
	e, err := ParseJAAS(`M required username="u" password="hidden-value-99";`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{e[0].String(), fmt.Sprint(e[0]), fmt.Sprintf("%+v %#v", e, e[0])} {
		if strings.Contains(s, "hidden-value-99") {
			t.Fatalf("String leaks a value: %s", s)
		}
	}
}

func TestParseJAASFile(t *testing.T) {
	file := `
/* Confluent-style static JAAS file */
KafkaServer {
   org.apache.kafka.common.security.plain.PlainLoginModule required
   username="admin" password="admin-secret" user_admin="admin-secret";
};
KafkaClient {
   com.sun.security.auth.module.Krb5LoginModule required
   useKeyTab=true
   keyTab="/etc/security/keytabs/connect.keytab"
   principal="connect@EXAMPLE.COM";
};
`
	got, found, err := ParseJAASFile(file, "KafkaClient")
	if err != nil || !found {
		t.Fatalf("found=%v err=%v", found, err)
	}
	want := []JAASEntry{{LoginModule: "com.sun.security.auth.module.Krb5LoginModule", Flag: "REQUIRED",
		Options: map[string]string{"useKeyTab": "true", "keyTab": "/etc/security/keytabs/connect.keytab", "principal": "connect@EXAMPLE.COM"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	if _, found, err := ParseJAASFile(file, "Client"); found || err != nil {
		t.Fatalf("Client: found=%v err=%v", found, err)
	}
	if _, _, err := ParseJAASFile("KafkaClient { M required a=\"${user.home}\"; };", "KafkaClient"); err == nil {
		t.Fatal("property expansion should be rejected")
	}
	if _, _, err := ParseJAASFile("KafkaClient { M required;", "KafkaClient"); err == nil {
		t.Fatal("unclosed section should be rejected")
	}
}

func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`,
		`M required a='x\'y' b="\377\400";`,
		"/* c */ M optional // x\n;",
		`M required a="unterminated`,
		"M required a=\"x\\",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseJAAS(s)
		if err == nil && len(entries) == 0 {
			t.Fatal("no error and no entries")
		}
		for _, e := range entries {
			switch e.Flag {
			case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
			default:
				t.Fatalf("bad flag %q", e.Flag)
			}
		}
	})
}
