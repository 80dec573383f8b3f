package main

// advice turns an error into the line shown to the user, adding the fix for
// the typed errors the libraries return. Each command's owner extends it.
func advice(err error) string {
	return err.Error()
}
