package gate

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/restclient"
)

type noGroupAdmin struct{ sarama.ClusterAdmin }

func (noGroupAdmin) DescribeConsumerGroups([]string) ([]*sarama.GroupDescription, error) {
	return nil, errors.New("not a member yet")
}

// A holder that is not (yet) seen in the group is ready when its REST API
// says so, over https with the worker's REST TLS settings, and on workers
// older than 3.9 by the herder's 404.
func TestWorkerReadinessOverREST(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.WriteHeader(404) // an old worker: Jersey's 404, as Connect maps it
			w.Write([]byte(`{"error_code":404,"message":"HTTP 404 Not Found"}`))
			return
		}
		n := strings.TrimPrefix(r.URL.Path, "/connectors/")
		w.WriteHeader(404)
		w.Write([]byte(`{"error_code":404,"message":"Connector ` + n + ` not found"}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsCfg.RootCAs = pool

	url := strings.Replace(srv.URL, "127.0.0.1", "%3A%3A1", 1) // unreachable form first: must fail, not panic
	if ok, _, err := NewWorkerReadiness(noGroupAdmin{}, "g", tlsCfg, restclient.Auth{}).Ready(context.Background(), url); ok || err == nil {
		t.Fatalf("a worker at an address nobody listens on is ready: %v", err)
	}
	ok, why, err := NewWorkerReadiness(noGroupAdmin{}, "g", tlsCfg, restclient.Auth{}).Ready(context.Background(), srv.URL+"/")
	if !ok || err != nil || !strings.Contains(why, "herder answered") {
		t.Fatalf("Ready = %v, %q, %v; want ready by the herder's 404", ok, why, err)
	}
	if ok, _, err := NewWorkerReadiness(noGroupAdmin{}, "g", nil, restclient.Auth{}).Ready(context.Background(), srv.URL+"/"); ok || err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the REST truststore: %v, %v", ok, err)
	}
}
