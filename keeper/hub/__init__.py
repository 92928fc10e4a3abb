"""The Memory Hub: one offline HTML page of every project, its data gathered here and its page as package data.

May import recall, store, memory and the leaves.
"""
