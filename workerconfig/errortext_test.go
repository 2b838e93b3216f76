package workerconfig

import (
	"errors"
	"strings"
	"testing"
)

// An error about a file or a connect-init setting, not one property, does
// not name the placeholder property "-"; a bad listener carries a fix
// (issue 52).
func TestErrorTextNamesTheSettingAndAFix(t *testing.T) {
	e := &Error{Setting: "CONNECT_INIT_WORKER_CONFIG", Property: "-", Problem: "names /x, which does not exist", Fix: "mount it"}
	if got := e.Error(); strings.Contains(got, "worker property") || !strings.HasPrefix(got, "CONNECT_INIT_WORKER_CONFIG names /x") {
		t.Errorf("Error() = %q", got)
	}
	_, err := RESTOptions{}.listeners(Properties{"listeners": "ftp://:8083"})
	var we *Error
	if !errors.As(err, &we) || we.Fix == "" {
		t.Errorf("listeners=ftp://:8083: %v, want an error with a fix", err)
	}
}
