package main

// main is never run: the package is built with -buildmode=c-shared, and
// its exported functions are the library.
func main() {}
