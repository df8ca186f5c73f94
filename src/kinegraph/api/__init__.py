"""The implementation behind `import kinegraph as kg`: runs from Python, runs as pandas frames."""
