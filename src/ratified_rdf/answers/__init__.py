"""Answers: from a question to a card. The router reads a question for entities and picks a
registered question type (`types`); each type's card runs hand-written queries in one `session`
and returns an `Answer` whose every step is a link, with the SPARQL it ran.
"""
