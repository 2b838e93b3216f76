//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// The package's shared real cluster: 3 KRaft brokers, started once.
var (
	cluster *testbed.Cluster
	binary  string // connect-init built with a version stamp
	workDir string
)

const testVersionStamp = "v0.0.0-itest"

func TestMain(m *testing.M) {
	os.Exit(mainWithCluster(m))
}

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	workDir, err = os.MkdirTemp("", "connect-init-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)

	if binary, err = testbed.BuildConnectInit(workDir, testVersionStamp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "test cluster: Kafka %s, bootstrap %s\n", dist.Version, cluster.Bootstrap())
	defer cluster.Close()
	return m.Run()
}
