print("trustbed: not built yet")
