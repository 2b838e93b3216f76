//go:build lockmutant

package lock

// skipClaimValidation: see mutant_off.go. This build is broken on purpose
// (every claim read back counts as valid) and exists only for the fault
// harness's control test; never ship it.
const skipClaimValidation = true
