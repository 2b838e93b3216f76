// Package layers holds no code: its test reads every package's imports and
// fails when one imports a package above it (its own parent, or a layer
// that must stay below it), so that dependencies keep pointing one way.
package layers
