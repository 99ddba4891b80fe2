"""Physics checks of pass documents: a versioned rule table (data), a pure checker (pint dimensions, owner
types, label agreement, the query's kind), and the app's side (rule settings, the page, the command)."""
