package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// slowPluginDirs is how many bulky plugins the slow-scan scenarios get.
const slowPluginDirs = 1

var (
	slowOnce sync.Once
	slowPath string
	slowErr  error
)

// slowPluginPath returns a plugin.path that makes Connect's plugin scan
// slow, as images with many connector plugins are: slowPluginDirs plugin
// directories, each holding every jar of the Kafka distribution (hard
// links where the file system allows, else copies), so that the
// ReflectionScanner reads the classpath's classes once more per plugin.
// It is made once per bench run, under the bench's work directory.
func slowPluginPath(b *bed) (string, error) {
	slowOnce.Do(func() {
		root := filepath.Join(b.dir, "slow-plugins")
		jars, err := filepath.Glob(filepath.Join(b.dist.LibDir, "*.jar"))
		if err != nil || len(jars) == 0 {
			slowErr = fmt.Errorf("slow plugin path: no jars in %s (%v)", b.dist.LibDir, err)
			return
		}
		for i := 1; i <= slowPluginDirs; i++ {
			dir := filepath.Join(root, fmt.Sprintf("bulky-plugin-%d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				slowErr = err
				return
			}
			for _, j := range jars {
				if err := linkOrCopy(j, filepath.Join(dir, filepath.Base(j))); err != nil {
					slowErr = fmt.Errorf("slow plugin path: %w", err)
					return
				}
			}
		}
		progress("slow plugin scan: plugin.path %s with %d plugin(s) of %d jars each", root, slowPluginDirs, len(jars))
		slowPath = root
	})
	return slowPath, slowErr
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}
